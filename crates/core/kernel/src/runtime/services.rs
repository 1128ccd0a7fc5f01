//! The service table: provide, look up, withdraw.

use std::any::Any;
use std::sync::Arc;

use serde_json::Value;

use super::Runtime;
use super::ServiceSlot;
use super::Undo;
use crate::error::KernelError;
use crate::fiber::FiberId;
use crate::fiber::FiberState;

impl Runtime {
    /// Registers `value` as service `name`, owned by `provider`; returns the effect id.
    pub(crate) fn provide(
        self: &Arc<Self>,
        provider: FiberId,
        name: &str,
        value: Arc<dyn Any + Send + Sync>,
        type_name: &'static str,
        fields: Option<Value>,
    ) -> Result<u64, KernelError> {
        let mut st = self.lock();
        st.check_live(provider)?;
        if let Some(existing) = st.services.get(name) {
            return Err(KernelError::DuplicateProvider {
                service: name.to_owned(),
                existing: st.label_of(existing.provider),
                requester: st.label_of(provider),
            });
        }
        let provision = st.next_id();
        st.services.insert(
            name.to_owned(),
            ServiceSlot {
                provider,
                provision,
                value,
                type_name,
                fields,
            },
        );
        let effect = st.push_effect(
            provider,
            Undo::Service {
                name: name.to_owned(),
                provision,
            },
        );
        if st.state_of(provider) == FiberState::Active {
            let concerned = st.injectors.get(name).cloned().unwrap_or_default();
            self.poke(&mut st, &concerned);
        }
        self.release(st);
        self.notify();
        Ok(effect)
    }

    /// Removes a provision and waits until the fibers that injected it have unloaded.
    pub(crate) async fn withdraw(self: &Arc<Self>, name: &str, provision: u64) {
        let concerned = {
            let mut st = self.lock();
            if !st.take_service(name, provision) {
                return;
            }
            let concerned = st.injectors.get(name).cloned().unwrap_or_default();
            self.poke(&mut st, &concerned);
            self.release(st);
            concerned
        };
        self.notify();
        self.wait_until(|st| {
            concerned
                .iter()
                .all(|fiber| st.state_of(*fiber) != FiberState::Unloading)
        })
        .await;
    }
}
