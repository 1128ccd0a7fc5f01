//! The model's reply to one request: every streamed chunk logged as `assistant/chunk` and
//! folded, then the `assistant/message` that cites those chunks (whole, or the visible prefix
//! of a reply the activity's cancellation cut short).

use dsh_llm::{
    BlockAssembler, ChunkStream, FinishReason, LlmFailure, Message, MessageSource, StreamChunk,
};
use dsh_protocol::kinds::{ASSISTANT_CHUNK, ASSISTANT_MESSAGE};
use dsh_session::SurfaceIntent;
use futures_util::StreamExt;
use serde_json::{Map, Value, json};

use crate::error::TurnError;
use crate::step_ctx::StepCtx;

/// A reply streamed into the log.
pub(crate) struct Reply {
    /// The chunks folded so far.
    assembler: BlockAssembler,
    /// The seqs of their `assistant/chunk` events.
    chunk_seqs: Vec<u64>,
}

impl Reply {
    /// Logs each chunk of `stream` and folds it, until the stream ends or the activity is
    /// cancelled (the chunk that raced the cancellation is not logged; the reply is what came
    /// before it). `Err` only when a chunk cannot be logged.
    pub(crate) async fn stream(ctx: &StepCtx, mut stream: ChunkStream) -> Result<Self, TurnError> {
        let mut reply = Self {
            assembler: BlockAssembler::new(),
            chunk_seqs: Vec::new(),
        };
        loop {
            let next = tokio::select! {
                biased;
                () = ctx.signal().cancelled() => return Ok(reply),
                chunk = stream.next() => chunk,
            };
            let Some(chunk) = next else {
                return Ok(reply);
            };
            if ctx.abort.is_aborted() {
                return Ok(reply);
            }
            let data = chunk_data(ctx, &chunk)?;
            let event = ctx
                .session()
                .append(ASSISTANT_CHUNK, data, SurfaceIntent::default())?;
            reply.chunk_seqs.push(event.seq);
            reply.assembler.push(&chunk);
        }
    }

    /// How the reply finished.
    pub(crate) fn finish(&self) -> FinishReason {
        self.assembler.finish()
    }

    /// The failure of an `error` or `aborted` finish.
    pub(crate) fn failure(&self) -> Option<LlmFailure> {
        match self.finish() {
            FinishReason::Error { failure } | FinishReason::Aborted { failure } => Some(failure),
            _ => None,
        }
    }

    /// The assistant message the reply assembles to, attributed to `provider` and `model`.
    pub(crate) fn message(&self, provider: &str, model: &str) -> Result<Message, TurnError> {
        self.assembler
            .model_message(provider, model)
            .map_err(|error| TurnError::unknown(error.to_string()))
    }

    /// Logs `message` as the reply's `assistant/message`.
    pub(crate) fn log(self, ctx: &StepCtx, message: &Message) -> Result<(), TurnError> {
        self.log_message(ctx, message, false)
    }

    /// On cancellation, keeps the visible prefix of the reply (text and reasoning) as an
    /// interrupted assistant message; tool calls are dropped.
    pub(crate) fn keep_interrupted(
        self,
        ctx: &StepCtx,
        provider: &str,
        model: &str,
    ) -> Result<(), TurnError> {
        let content = self.assembler.interrupted_blocks();
        if content.is_empty() {
            return Ok(());
        }
        let message = Message::assistant(content, MessageSource::model(provider, model));
        self.log_message(ctx, &message, true)
    }

    fn log_message(
        self,
        ctx: &StepCtx,
        message: &Message,
        interrupted: bool,
    ) -> Result<(), TurnError> {
        let mut data = Map::new();
        data.insert("turn".into(), json!(ctx.turn));
        data.insert("step".into(), json!(ctx.step));
        data.insert("message".into(), to_json(message)?);
        if interrupted {
            data.insert("interrupted".into(), json!(true));
        }
        if let Some(usage) = self.assembler.usage() {
            data.insert("usage".into(), to_json(&usage)?);
        }
        ctx.session().append(
            ASSISTANT_MESSAGE,
            Value::Object(data),
            SurfaceIntent::append_from(self.chunk_seqs),
        )?;
        Ok(())
    }
}

fn chunk_data(ctx: &StepCtx, chunk: &StreamChunk) -> Result<Value, TurnError> {
    Ok(json!({"turn": ctx.turn, "step": ctx.step, "chunk": to_json(chunk)?}))
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<Value, TurnError> {
    serde_json::to_value(value)
        .map_err(|error| TurnError::unknown(format!("a model event is not JSON: {error}")))
}
