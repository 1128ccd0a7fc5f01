//! One step: stream the model's reply into the log, assemble it, run its tool calls.

use std::sync::Arc;

use dsh_kernel::error_chain;
use dsh_llm::{
    BlockAssembler, ContentBlock, FinishReason, LlmFailure, Message, MessageSource, StreamChunk,
};
use dsh_session::SurfaceIntent;
use dsh_system_prompt::{PromptAssembly, render_prompt};
use futures_util::StreamExt;
use serde_json::{Map, Value, json};

use crate::agent::Agent;
use crate::cause::Abort;
use crate::error::TurnError;
use crate::events::{AgentRequestError, RequestErrorAction, RequestErrorArgs};
use crate::outcome::TurnEndReason;
use crate::request::BuiltRequest;
use crate::tool_calls::PlannedCall;
use crate::turn::check;

impl Agent {
    /// Runs one step. `Ok(Some(end))` ends the turn (`completed`, `max-tokens`); `Ok(None)`
    /// means tools ran and the model should see their results in another step.
    pub(crate) async fn step(
        self: &Arc<Self>,
        turn: u64,
        step: u64,
        assembly: &PromptAssembly,
        abort: &Abort,
    ) -> Result<Option<TurnEndReason>, TurnError> {
        check(abort)?;
        let system =
            render_prompt(assembly).map_err(|error| TurnError::unknown(error.to_string()))?;
        let mut retries = 0;
        loop {
            self.runtime.checkpoint(self.id()).await;
            let BuiltRequest { options, prepared } = self
                .build_request(turn, step, &assembly.tools, &system, abort)
                .await?;
            let provider = options.provider.clone();
            let model = options.model.clone();
            let stream = match &prepared {
                Some(prepared) => prepared.stream(options).map_err(TurnError::Failed)?,
                None => self.runtime.llm.stream(options),
            };
            let mut assembler = BlockAssembler::new();
            let mut chunk_seqs = Vec::new();
            let streamed = self
                .log_stream(turn, step, stream, abort, &mut assembler, &mut chunk_seqs)
                .await;
            if let Err(TurnError::Failed(failure)) = streamed {
                return Err(TurnError::Failed(failure));
            }
            if abort.is_aborted() {
                self.keep_interrupted(turn, step, &provider, &model, &assembler, chunk_seqs)?;
                return Err(TurnError::Aborted);
            }
            let failure = match assembler.finish() {
                FinishReason::Error { failure } | FinishReason::Aborted { failure } => {
                    Some(failure)
                }
                _ => None,
            };
            if let Some(failure) = failure {
                let retry_policy = prepared.as_ref().map(|call| call.retry_policy().clone());
                let action = self
                    .request_error(
                        turn,
                        step,
                        provider,
                        failure.clone(),
                        retry_policy,
                        retries,
                        abort,
                    )
                    .await?;
                check(abort)?;
                match action {
                    Some(RequestErrorAction::Retry) => {
                        retries += 1;
                        continue;
                    }
                    None => return Err(TurnError::Failed(failure)),
                }
            }
            let message = assembler
                .model_message(&provider, &model)
                .map_err(|error| TurnError::unknown(error.to_string()))?;
            self.log_assistant(turn, step, &message, &assembler, chunk_seqs, false)?;
            if matches!(assembler.finish(), FinishReason::MaxTokens) {
                return Ok(Some(TurnEndReason::MaxTokens));
            }
            let calls: Vec<PlannedCall> = message
                .content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::ToolCall {
                        id,
                        name,
                        arguments,
                    } => Some(PlannedCall {
                        id: id.clone(),
                        name: name.clone(),
                        arguments: arguments.clone(),
                    }),
                    _ => None,
                })
                .collect();
            if calls.is_empty() {
                return Ok(Some(TurnEndReason::Completed));
            }
            self.execute_tool_calls(turn, step, calls, abort).await?;
            return Ok(None);
        }
    }

    /// Logs each chunk as `assistant/chunk` and folds it. `Err` when the activity was
    /// cancelled first (the chunk that raced the cancellation is not logged).
    async fn log_stream(
        &self,
        turn: u64,
        step: u64,
        mut stream: dsh_llm::ChunkStream,
        abort: &Abort,
        assembler: &mut BlockAssembler,
        chunk_seqs: &mut Vec<u64>,
    ) -> Result<(), TurnError> {
        loop {
            let next = tokio::select! {
                biased;
                () = abort.token().cancelled() => return Err(TurnError::Aborted),
                chunk = stream.next() => chunk,
            };
            let Some(chunk) = next else {
                return Ok(());
            };
            check(abort)?;
            let data = chunk_data(turn, step, &chunk)?;
            let event = self
                .session()
                .append("assistant/chunk", data, SurfaceIntent::default())?;
            chunk_seqs.push(event.seq);
            assembler.push(&chunk);
        }
    }

    /// On cancellation, keeps the visible prefix of the reply (text and reasoning) as an
    /// interrupted assistant message; tool calls are dropped.
    fn keep_interrupted(
        &self,
        turn: u64,
        step: u64,
        provider: &str,
        model: &str,
        assembler: &BlockAssembler,
        chunk_seqs: Vec<u64>,
    ) -> Result<(), TurnError> {
        let content = assembler.interrupted_blocks();
        if content.is_empty() {
            return Ok(());
        }
        let message = Message::assistant(content, MessageSource::model(provider, model));
        self.log_assistant(turn, step, &message, assembler, chunk_seqs, true)
    }

    fn log_assistant(
        &self,
        turn: u64,
        step: u64,
        message: &Message,
        assembler: &BlockAssembler,
        chunk_seqs: Vec<u64>,
        interrupted: bool,
    ) -> Result<(), TurnError> {
        let mut data = Map::new();
        data.insert("turn".into(), json!(turn));
        data.insert("step".into(), json!(step));
        data.insert("message".into(), to_json(message)?);
        if interrupted {
            data.insert("interrupted".into(), json!(true));
        }
        if let Some(usage) = assembler.usage() {
            data.insert("usage".into(), to_json(&usage)?);
        }
        self.session().append(
            "assistant/message",
            Value::Object(data),
            SurfaceIntent::append_from(chunk_seqs),
        )?;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)] // the waterfall's payload, field by field
    async fn request_error(
        self: &Arc<Self>,
        turn: u64,
        step: u64,
        provider: String,
        failure: LlmFailure,
        retry_policy: Option<dsh_llm::RetryPolicy>,
        retries: u64,
        abort: &Abort,
    ) -> Result<Option<RequestErrorAction>, TurnError> {
        let Some(agent) = self.arc() else {
            return Err(TurnError::Aborted);
        };
        let args = RequestErrorArgs {
            agent,
            turn,
            step,
            provider,
            failure,
            retry_policy,
            retries,
            signal: abort.token().clone(),
        };
        self.runtime
            .ctx
            .waterfall::<AgentRequestError, _, _>(args, |_| async { Ok(None) })
            .await
            .map_err(|error| TurnError::unknown(error_chain(error.as_ref())))
    }
}

fn chunk_data(turn: u64, step: u64, chunk: &StreamChunk) -> Result<Value, TurnError> {
    Ok(json!({"turn": turn, "step": step, "chunk": to_json(chunk)?}))
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<Value, TurnError> {
    serde_json::to_value(value)
        .map_err(|error| TurnError::unknown(format!("a model event is not JSON: {error}")))
}
