//! Shared helpers for the compose tests.

use dsh_compose::Layer;
use dsh_compose::node::Node;
use dsh_compose::patch::PatchFileKind;
use dsh_compose::patch::PatchList;
use dsh_compose::yaml::parse_document;

/// A layer called `label` from patch-list YAML.
pub fn layer(label: &str, text: &str) -> Layer {
    Layer {
        label: label.to_owned(),
        patches: PatchList::parse(text, label, PatchFileKind::Patches).unwrap(),
    }
}

/// A YAML document as a node.
pub fn yaml(text: &str) -> Node {
    parse_document(text).unwrap().unwrap()
}

pub const BASE: &str = "
- insert:
    - id: session
      name: dsh-session
    - id: session-persistence-jsonl
      name: dsh-persistence-jsonl
      config:
        root: !!js dshHomePath('sessions')
    - id: tools
      name: dsh-tools
    - id: agent-loop
      name: dsh-agent-loop
      config:
        agents: []
";
