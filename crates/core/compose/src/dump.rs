//! `--dump-config`: the composed tree as one loadable YAML document, each run of rows under a
//! `# == <origin>[, patched by <layers>]` comment.

use crate::compose::Composition;
use crate::node::Node;
use crate::yaml::rows_to_yaml;

impl Composition {
    /// The dump text. Expressions print verbatim, unevaluated.
    pub fn render_dump(&self) -> String {
        if self.rows().is_empty() {
            return "[]\n".to_owned();
        }
        let mut out = String::new();
        let mut run: Vec<&Node> = Vec::new();
        let mut current: Option<String> = None;
        for (row, provenance) in self.rows().iter().zip(self.provenance()) {
            let label = if provenance.patched_by.is_empty() {
                provenance.origin.clone()
            } else {
                format!(
                    "{}, patched by {}",
                    provenance.origin,
                    provenance.patched_by.join(", ")
                )
            };
            if current.as_ref() != Some(&label) {
                flush(&mut out, current.as_deref(), &mut run);
                current = Some(label);
            }
            run.push(row);
        }
        flush(&mut out, current.as_deref(), &mut run);
        out
    }
}

fn flush(out: &mut String, label: Option<&str>, run: &mut Vec<&Node>) {
    let Some(label) = label else {
        return;
    };
    if run.is_empty() {
        return;
    }
    out.push_str("# == ");
    out.push_str(label);
    out.push('\n');
    out.push_str(&rows_to_yaml(run));
    run.clear();
}
