//! The registrations, in registration order, each under the id its undo removes.

use std::any::Any;
use std::sync::Arc;

use crate::input::{PromptContext, PromptSection, ToolProvider, VariableFn};

/// A removed registration, dropped by the caller once the table's lock is released (a
/// provider's captures may run arbitrary code when dropped).
pub(crate) type Removed = Box<dyn Any + Send>;

/// Which list a registration lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Section,
    Context,
    Variable,
    Tools,
    Suppressor,
}

/// Every registration of the service.
#[derive(Default)]
pub(crate) struct Table {
    next_id: u64,
    pub(crate) sections: Vec<(u64, Arc<PromptSection>)>,
    pub(crate) contexts: Vec<(u64, Arc<PromptContext>)>,
    pub(crate) variables: Vec<(u64, String, VariableFn)>,
    pub(crate) tools: Vec<(u64, ToolProvider)>,
    pub(crate) suppressors: Vec<u64>,
}

impl Table {
    /// A fresh id; ids grow, so they also record registration order.
    pub(crate) fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Removes registration `id` of `kind`, if it is still there.
    pub(crate) fn remove(&mut self, kind: Kind, id: u64) -> Option<Removed> {
        match kind {
            Kind::Section => take(&mut self.sections, |entry| entry.0 == id),
            Kind::Context => take(&mut self.contexts, |entry| entry.0 == id),
            Kind::Variable => take(&mut self.variables, |entry| entry.0 == id),
            Kind::Tools => take(&mut self.tools, |entry| entry.0 == id),
            Kind::Suppressor => take(&mut self.suppressors, |entry| *entry == id),
        }
    }

    /// The first variable registered after id `after`, for assemblies that see variables
    /// registered while earlier variables are evaluated.
    pub(crate) fn variable_after(&self, after: u64) -> Option<(u64, String, VariableFn)> {
        self.variables
            .iter()
            .find(|(id, _, _)| *id > after)
            .map(|(id, name, provider)| (*id, name.clone(), Arc::clone(provider)))
    }
}

fn take<T: Send + 'static>(list: &mut Vec<T>, matches: impl Fn(&T) -> bool) -> Option<Removed> {
    let index = list.iter().position(matches)?;
    Some(Box::new(list.remove(index)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_only_the_matching_id() {
        let mut table = Table::default();
        let first = table.next_id();
        let second = table.next_id();
        table.suppressors.extend([first, second]);
        assert!(table.remove(Kind::Suppressor, first).is_some());
        assert!(table.remove(Kind::Suppressor, first).is_none());
        assert!(table.remove(Kind::Section, second).is_none());
        assert_eq!(table.suppressors, [second]);
    }

    #[test]
    fn variables_after_an_id() {
        let mut table = Table::default();
        for name in ["a", "b"] {
            let id = table.next_id();
            table
                .variables
                .push((id, name.to_owned(), Arc::new(|_: &_| None)));
        }
        let names: Vec<String> = std::iter::successors(table.variable_after(0), |(id, _, _)| {
            table.variable_after(*id)
        })
        .map(|(_, name, _)| name)
        .collect();
        assert_eq!(names, ["a", "b"]);
    }
}
