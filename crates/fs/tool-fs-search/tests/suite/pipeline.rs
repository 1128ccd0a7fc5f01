//! The tools in the registry: what the model is offered, the prompt sections, the execution
//! mode, values replaced by post-execute listeners, and unloading.

use std::sync::Arc;

use dsh_system_prompt::{AssembleContext, SYSTEM_PROMPT};
use dsh_tools::{
    CancellationToken, ExecutionMode, PostExecute, PostToolDecision, ToolExecutionInput,
    ToolsPostExecute,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{harness, harness_with, text};
use super::tree::Tree;

type PostNext = dsh_kernel::Next<Arc<PostExecute>, Result<PostToolDecision, dsh_tools::ToolError>>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_is_offered_dshs_schemas() {
    let harness = harness().await;
    let schemas: Vec<Value> = harness
        .tools
        .schemas()
        .into_iter()
        .map(|schema| {
            let mut parameters = schema.parameters.clone();
            for property in parameters["properties"]
                .as_object_mut()
                .unwrap()
                .values_mut()
            {
                property["description"] = json!("…");
            }
            json!({"name": schema.name, "parameters": parameters})
        })
        .collect();
    insta::assert_snapshot!(serde_json::to_string_pretty(&schemas).unwrap(), @r#"
    [
      {
        "name": "glob",
        "parameters": {
          "type": "object",
          "properties": {
            "pattern": {
              "type": "string",
              "description": "…"
            },
            "path": {
              "type": "string",
              "description": "…"
            }
          },
          "required": [
            "pattern"
          ]
        }
      },
      {
        "name": "grep",
        "parameters": {
          "type": "object",
          "properties": {
            "pattern": {
              "type": "string",
              "description": "…"
            },
            "path": {
              "type": "string",
              "description": "…"
            },
            "include": {
              "type": "string",
              "description": "…"
            }
          },
          "required": [
            "pattern"
          ]
        }
      }
    ]
    "#);
    let glob = harness.tools.get("glob").unwrap();
    insta::assert_snapshot!(glob.description(), @"List the files whose paths match a glob pattern. Only files are returned, never directories; hidden and ignored files are included, VCS metadata directories (.git, .svn, .hg, .bzr, .jj, .sl) are not. Up to 100 paths are returned, ordered by modification time, oldest first; a larger result shows its 100 oldest paths, states how many paths matched, and gives the location of a file holding the complete sorted list. It does not list the entries of a directory.");
    let grep = harness.tools.get("grep").unwrap();
    insta::assert_snapshot!(grep.description(), @"Search the contents of files with a regular expression (ripgrep syntax, case sensitive). Matching lines come back with their line numbers, grouped by file. The first 250 matches are returned; a larger result states how many lines matched and gives the location of a file holding all of them. To see the lines around a match, read the file.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_tools_run_alone() {
    let harness = harness().await;
    for (name, arguments) in [
        ("glob", json!({"pattern": "*"})),
        ("grep", json!({"pattern": "x"})),
    ] {
        let input = ToolExecutionInput::new("c", name, arguments, CancellationToken::new());
        assert_eq!(
            harness.tools.execution_mode(&input),
            ExecutionMode::Exclusive
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prompt_sections_are_dshs_and_in_order() {
    let harness = harness().await;
    let prompt = harness.kernel.root().require(&SYSTEM_PROMPT).unwrap();
    let assembly = prompt.assemble(&AssembleContext::default()).await.unwrap();
    let names: Vec<&str> = assembly.sections.iter().map(|s| s.name.as_str()).collect();
    let glob = names.iter().position(|name| *name == "tool:glob").unwrap();
    let grep = names.iter().position(|name| *name == "tool:grep").unwrap();
    assert_eq!(grep, glob + 1);
    assert_eq!(
        assembly.sections[glob].text,
        "Use the glob tool — not shell find — to discover files by path pattern. A pattern with \
         no \"/\" matches basenames at any depth, so \"*\" matches every file in the tree rather \
         than its top level. Results are files only, never directories, and include hidden and \
         ignored files: a result that fits comes back in modification-time order, while a \
         larger one keeps the modification-time-ordered head."
    );
    assert_eq!(
        assembly.sections[grep].text,
        "Use the grep tool — not shell grep or rg — to search file contents. Use read on a \
         matched file when you need surrounding context."
    );
    let sampled = harness_with(json!({"sampleOverCapGlobResults": true})).await;
    let prompt = sampled.kernel.root().require(&SYSTEM_PROMPT).unwrap();
    let assembly = prompt.assemble(&AssembleContext::default()).await.unwrap();
    let section = assembly
        .sections
        .iter()
        .find(|s| s.name == "tool:glob")
        .unwrap();
    assert!(section.text.ends_with(
        "while a larger one is sampled across top-level entries, so it spans the tree instead \
         of one subtree."
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_value_is_rendered_without_saving() {
    let tree = Tree::new();
    tree.write("old-a.ts", "old\n").write("old-b.ts", "old\n");
    let harness = harness_with(json!({"globMaxResults": 1, "grepMaxMatches": 1})).await;
    harness
        .kernel
        .root()
        .on::<ToolsPostExecute>(|post: Arc<PostExecute>, _next: PostNext| async move {
            let value = if post.execution.name() == "glob" {
                json!({"root": ".", "paths": ["replacement-a.ts", "replacement-b.ts"]})
            } else {
                json!({"matches": [
                    {"path": "replacement.ts", "lineNumber": 7, "line": "first"},
                    {"path": "replacement.ts", "lineNumber": 8, "line": "second"}
                ]})
            };
            Ok(PostToolDecision::Accept {
                content: None,
                value: Some(value),
            })
        })
        .unwrap();
    let glob = harness
        .call_in(tree.path(), "glob", json!({"pattern": "*.ts"}))
        .await;
    assert_eq!(
        text(&glob),
        "replacement-a.ts\n\n(Showing 1 of 2 paths. The complete result could not be saved; \
         narrow pattern or path to see more.)"
    );
    assert_eq!(
        glob.meta.unwrap(),
        json!({"shape": "paths", "paths": ["replacement-a.ts"], "truncated": true, "total": 2})
    );
    let grep = harness
        .call_in(tree.path(), "grep", json!({"pattern": "old"}))
        .await;
    assert_eq!(
        text(&grep),
        "Found 1 of 2 matches\n\nreplacement.ts\nLine 7: first\n\n(The complete result could \
         not be saved; narrow pattern, path, or include to see more.)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unloading_the_plugin_withdraws_the_tools() {
    let kernel = dsh_kernel::Kernel::new().unwrap();
    let ctx = kernel.root();
    ctx.plugin(dsh_system_prompt::SystemPromptPlugin, json!({}))
        .unwrap();
    ctx.plugin(dsh_tools::ToolsPlugin, json!({})).unwrap();
    let fiber = ctx
        .plugin(
            dsh_tool_fs_search::ToolFsSearchPlugin,
            json!({"sampleOverCapGlobResults": false}),
        )
        .unwrap();
    kernel.settle().await;
    let tools = ctx.require(&dsh_tools::TOOLS).unwrap();
    assert_eq!(tools.names(), ["glob", "grep"]);
    fiber.dispose().await;
    assert!(tools.names().is_empty());
    let prompt = ctx.require(&SYSTEM_PROMPT).unwrap();
    let assembly = prompt.assemble(&AssembleContext::default()).await.unwrap();
    assert!(
        !assembly
            .sections
            .iter()
            .any(|s| s.name.starts_with("tool:g"))
    );
    kernel.shutdown().await;
}
