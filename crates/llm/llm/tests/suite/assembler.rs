//! The block assembler, case for case with dsh's `assembler.spec.ts`.

use dsh_llm::{
    AssembleError, BlockAssembler, ContentBlock, FinishReason, MessageSource, Role, StreamChunk,
    TokenUsage,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn start(index: u64, block_type: &str) -> StreamChunk {
    StreamChunk::BlockStart {
        index,
        block_type: block_type.into(),
    }
}

fn text(index: u64, text: &str) -> StreamChunk {
    StreamChunk::TextDelta {
        index,
        text: text.into(),
    }
}

fn reasoning(index: u64, text: &str) -> StreamChunk {
    StreamChunk::ReasoningDelta {
        index,
        text: text.into(),
    }
}

fn call(index: u64, id: &str, name: Option<&str>, args: &str) -> StreamChunk {
    StreamChunk::ToolCallDelta {
        index,
        id: id.into(),
        name: name.map(str::to_owned),
        arguments_delta: args.into(),
    }
}

fn end(index: u64, block: ContentBlock) -> StreamChunk {
    StreamChunk::BlockEnd { index, block }
}

fn finish(reason: FinishReason, replay_state: Option<Value>) -> StreamChunk {
    StreamChunk::Finish {
        reason,
        replay_state,
    }
}

fn fed(chunks: &[StreamChunk]) -> BlockAssembler {
    let mut assembler = BlockAssembler::new();
    for chunk in chunks {
        assembler.push(chunk);
    }
    assembler
}

fn usage(input: u64, output: u64) -> TokenUsage {
    TokenUsage {
        input_tokens: input,
        output_tokens: output,
        ..TokenUsage::default()
    }
}

#[test]
fn interleaved_text_reasoning_and_tool_calls() {
    let assembler = fed(&[
        start(0, "reasoning"),
        reasoning(0, "thinking…"),
        end(0, ContentBlock::reasoning("thinking…")),
        start(1, "text"),
        text(1, "Hello"),
        text(1, " world"),
        start(2, "tool-call"),
        call(2, "call-1", Some("echo"), "{\"text\":"),
        call(2, "call-1", None, "\"hi\"}"),
        StreamChunk::Usage {
            usage: usage(10, 5),
        },
        finish(FinishReason::ToolCalls, None),
    ]);
    assert_eq!(
        assembler.blocks().unwrap(),
        vec![
            ContentBlock::reasoning("thinking…"),
            ContentBlock::text("Hello world"),
            ContentBlock::tool_call("call-1", "echo", "{\"text\":\"hi\"}"),
        ]
    );
    assert_eq!(assembler.usage(), Some(usage(10, 5)));
    assert_eq!(assembler.finish(), FinishReason::ToolCalls);
    let message = assembler.model_message("p", "m").unwrap();
    assert_eq!(message.role, Role::Assistant);
    assert_eq!(message.source, MessageSource::model("p", "m"));
}

#[test]
fn deltas_need_no_start_and_finish_defaults_to_stop() {
    let assembler = fed(&[text(0, "implicit")]);
    assert_eq!(
        assembler.blocks().unwrap(),
        vec![ContentBlock::text("implicit")]
    );
    assert_eq!(assembler.finish(), FinishReason::Stop);
    assert!(!assembler.finished());
    assert_eq!(assembler.usage(), None);
}

#[test]
fn the_first_block_end_wins() {
    let assembler = fed(&[
        start(0, "text"),
        text(0, "one"),
        start(0, "text"),
        text(0, " two"),
        end(0, ContentBlock::text("one two")),
        text(0, " straggler"),
    ]);
    assert_eq!(
        assembler.blocks().unwrap(),
        vec![ContentBlock::text("one two")]
    );
    let closed_twice = fed(&[
        end(0, ContentBlock::reasoning("first")),
        end(0, ContentBlock::text("second")),
    ]);
    assert_eq!(
        closed_twice.blocks().unwrap(),
        vec![ContentBlock::reasoning("first")]
    );
    let call_straggler = fed(&[
        start(0, "tool-call"),
        call(0, "c1", Some("echo"), "{}"),
        end(0, ContentBlock::tool_call("c1", "echo", "{}")),
        call(0, "c1", Some("evil"), "oops"),
    ]);
    assert_eq!(
        call_straggler.blocks().unwrap(),
        vec![ContentBlock::tool_call("c1", "echo", "{}")]
    );
}

#[test]
fn a_tool_call_without_id_gets_call_index() {
    let assembler = fed(&[start(3, "tool-call")]);
    assert_eq!(
        assembler.blocks().unwrap(),
        vec![ContentBlock::tool_call("call-3", "", "")]
    );
}

#[test]
fn an_open_block_of_unknown_type_cannot_be_assembled() {
    let assembler = fed(&[start(0, "video")]);
    assert_eq!(
        assembler.blocks().unwrap_err(),
        AssembleError {
            block_type: "video".into()
        }
    );
    assert_eq!(
        assembler.blocks().unwrap_err().to_string(),
        "cannot assemble incomplete block of type \"video\""
    );
}

#[test]
fn max_tokens_drops_tool_calls_and_prunes_replay_entries() {
    let response = json!({"responseId": "resp-1"});
    let assembler = fed(&[
        end(0, ContentBlock::text("lead")),
        end(1, ContentBlock::tool_call("c1", "echo", "{\"text\":")),
        end(2, ContentBlock::reasoning("tail")),
        finish(
            FinishReason::MaxTokens,
            Some(json!({"response": response, "blocks": ["meta-0", "meta-1", "meta-2"]})),
        ),
    ]);
    assert_eq!(
        assembler.blocks().unwrap(),
        vec![ContentBlock::text("lead"), ContentBlock::reasoning("tail")]
    );
    assert_eq!(
        assembler.replay_state().unwrap(),
        Some(json!({"response": response, "blocks": ["meta-0", "meta-2"]}))
    );
    let message = assembler.model_message("p", "m").unwrap();
    assert_eq!(
        message.source,
        MessageSource::Model {
            provider: "p".into(),
            model: "m".into(),
            replay_state: Some(json!({"response": response, "blocks": ["meta-0", "meta-2"]})),
        }
    );
}

#[test]
fn misaligned_replay_entries_are_dropped_and_others_pass() {
    let response = json!({"responseId": "resp-1"});
    let misaligned = fed(&[
        end(0, ContentBlock::text("one")),
        end(1, ContentBlock::text("two")),
        finish(
            FinishReason::Stop,
            Some(json!({"response": response, "blocks": ["meta-0"]})),
        ),
    ]);
    assert_eq!(misaligned.blocks().unwrap().len(), 2);
    assert_eq!(misaligned.replay_state().unwrap(), None);

    let whole = json!({"response": response, "blocks": ["meta-0", "meta-1"]});
    let unchanged = fed(&[
        end(0, ContentBlock::text("partial")),
        end(1, ContentBlock::tool_call("c1", "echo", "{}")),
        finish(FinishReason::ToolCalls, Some(whole.clone())),
    ]);
    assert_eq!(unchanged.replay_state().unwrap(), Some(whole));

    let response_only = json!({"response": response});
    let kept = fed(&[
        end(0, ContentBlock::text("partial")),
        end(1, ContentBlock::tool_call("c1", "echo", "{\"text\":")),
        finish(FinishReason::MaxTokens, Some(response_only.clone())),
    ]);
    assert_eq!(kept.blocks().unwrap(), vec![ContentBlock::text("partial")]);
    assert_eq!(kept.replay_state().unwrap(), Some(response_only));

    let text_only = json!({"response": response, "blocks": ["meta-0"]});
    let intact = fed(&[
        end(0, ContentBlock::text("partial")),
        finish(FinishReason::MaxTokens, Some(text_only.clone())),
    ]);
    assert_eq!(intact.replay_state().unwrap(), Some(text_only));
}

#[test]
fn interrupted_blocks_keep_visible_text_and_reasoning() {
    let assembler = fed(&[
        start(0, "reasoning"),
        reasoning(0, "planning"),
        end(0, ContentBlock::reasoning("planning")),
        start(1, "text"),
        text(1, "half an ans"),
    ]);
    assert_eq!(
        assembler.interrupted_blocks(),
        vec![
            ContentBlock::reasoning("planning"),
            ContentBlock::text("half an ans")
        ]
    );
    let calls = fed(&[
        start(0, "text"),
        text(0, "calling"),
        end(0, ContentBlock::text("calling")),
        start(1, "tool-call"),
        call(1, "c1", Some("read"), "{\"a\":1}"),
        end(1, ContentBlock::tool_call("c1", "read", "{\"a\":1}")),
        start(2, "tool-call"),
        call(2, "c2", Some("read"), "{\"pa"),
    ]);
    assert_eq!(
        calls.interrupted_blocks(),
        vec![ContentBlock::text("calling")]
    );
    let blank = fed(&[
        start(0, "text"),
        text(0, "  \n"),
        start(1, "mystery"),
        start(2, "reasoning"),
    ]);
    assert_eq!(blank.interrupted_blocks(), Vec::<ContentBlock>::new());
}

#[test]
fn the_fixture_step_assembles_to_the_logged_message() {
    // Step 1 of the zstd fixture: reasoning and a tool call, closed out of order.
    let arguments = "{\"command\":\"echo hello-from-dsh && uname -s\",\"description\":\"Run step 1 of the demo\"}";
    let assembler = fed(&[
        start(0, "reasoning"),
        reasoning(0, "The user wants a shell command run; "),
        reasoning(0, "I will call the bash tool."),
        start(1, "tool-call"),
        call(
            1,
            "call_fake_1",
            Some("bash"),
            "{\"command\":\"echo hello-from-dsh && uname -",
        ),
        call(
            1,
            "call_fake_1",
            Some("bash"),
            "s\",\"description\":\"Run step 1 of the demo\"}",
        ),
        end(1, ContentBlock::tool_call("call_fake_1", "bash", arguments)),
        end(
            0,
            ContentBlock::reasoning(
                "The user wants a shell command run; I will call the bash tool.",
            ),
        ),
        finish(FinishReason::ToolCalls, None),
    ]);
    let mut message = assembler
        .model_message("deepseek-official", "deepseek-v4-flash")
        .unwrap();
    message.id = "5564231d-d969-4331-a011-2186454a5db3".into();
    assert_eq!(
        dsh_protocol::json::to_js_string(&message),
        r#"{"role":"assistant","content":[{"type":"reasoning","text":"The user wants a shell command run; I will call the bash tool."},{"type":"tool-call","id":"call_fake_1","name":"bash","arguments":"{\"command\":\"echo hello-from-dsh && uname -s\",\"description\":\"Run step 1 of the demo\"}"}],"source":{"kind":"model","provider":"deepseek-official","model":"deepseek-v4-flash"},"id":"5564231d-d969-4331-a011-2186454a5db3"}"#
    );
}
