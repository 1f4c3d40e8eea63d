//! Phones with a browser, as the device gateways report them. The controller watches each
//! configured gateway (`controller.gateways`): which tenant's phones are connected, and when
//! the user took over or handed back on one — which open and close holds. Hold changes go back
//! to the gateway, so the phone shows or hides its take-over sheet. A phone's browser is one
//! page, so the actions sent to one phone run one at a time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nanomuse_common::hop::{InternalChannel, internal};
use nanomuse_proto::device_gateway_client::DeviceGatewayClient;
use nanomuse_proto::screencast::{GrpcScreencast, Screencast};
use nanomuse_proto::{Backend, DeviceEvent, GrpcBackend, HoldNotice, WatchDevicesRequest};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tonic::transport::Channel;

use crate::app::Controller;
use crate::error::ControllerError;
use crate::holds::OpenedBy;

/// One connected phone with a browser.
pub struct Phone {
    pub device_id: String,
    /// The gateway it is connected to.
    pub gateway: String,
    pub backend: Arc<dyn Backend>,
    /// Its live view, through its gateway's `WorkerScreencast` (screenshots back to back).
    pub screencast: Option<Arc<dyn Screencast>>,
    /// One action at a time: the phone has one page.
    pub turn: Arc<Semaphore>,
}

#[derive(Default)]
pub struct Devices {
    /// tenant → its phones with a browser, most recently connected last.
    by_tenant: Mutex<HashMap<String, Vec<Arc<Phone>>>>,
}

impl Devices {
    /// The tenant's phone for browser actions: the one connected most recently.
    pub fn browser_of(&self, tenant: &str) -> Option<Arc<Phone>> {
        self.by_tenant.lock().unwrap().get(tenant)?.last().cloned()
    }

    /// Phones with a browser, of every tenant.
    pub fn connected_count(&self) -> usize {
        self.by_tenant.lock().unwrap().values().map(Vec::len).sum()
    }

    /// The ids of the tenant's phones with a browser.
    pub fn of(&self, tenant: &str) -> Vec<String> {
        let by_tenant = self.by_tenant.lock().unwrap();
        by_tenant
            .get(tenant)
            .map(|phones| phones.iter().map(|p| p.device_id.clone()).collect())
            .unwrap_or_default()
    }

    fn connected(&self, tenant: &str, phone: Phone) {
        let mut by_tenant = self.by_tenant.lock().unwrap();
        let phones = by_tenant.entry(tenant.to_string()).or_default();
        phones.retain(|p| p.device_id != phone.device_id);
        phones.push(Arc::new(phone));
    }

    fn left(&self, tenant: &str, device_id: &str) {
        let mut by_tenant = self.by_tenant.lock().unwrap();
        if let Some(phones) = by_tenant.get_mut(tenant) {
            phones.retain(|p| p.device_id != device_id);
        }
        by_tenant.retain(|_, phones| !phones.is_empty());
    }

    /// Forgets the phones of a gateway that cannot be reached.
    fn gateway_gone(&self, gateway: &str) {
        let mut by_tenant = self.by_tenant.lock().unwrap();
        for phones in by_tenant.values_mut() {
            phones.retain(|p| p.gateway != gateway);
        }
        by_tenant.retain(|_, phones| !phones.is_empty());
    }

    /// The gateways the tenant's phones are connected to.
    fn gateways_of(&self, tenant: &str) -> Vec<String> {
        let by_tenant = self.by_tenant.lock().unwrap();
        let mut gateways: Vec<String> = by_tenant
            .get(tenant)
            .map(|phones| phones.iter().map(|p| p.gateway.clone()).collect())
            .unwrap_or_default();
        gateways.dedup();
        gateways
    }
}

/// Watches every gateway of the configuration, and tells them of hold changes, until
/// `shutdown`; the tasks are `background`'s.
pub fn spawn(
    controller: Arc<Controller>,
    gateways: &[String],
    shutdown: CancellationToken,
    background: &TaskTracker,
) {
    let hop_secret = controller.hop_secret().cloned();
    let mut clients = HashMap::new();
    for gateway in gateways {
        let channel = match Channel::from_shared(gateway.clone()) {
            Ok(endpoint) => endpoint.connect_lazy(),
            Err(error) => {
                tracing::error!(gateway, %error, "bad gateway address; not watched");
                continue;
            }
        };
        clients.insert(
            gateway.clone(),
            DeviceGatewayClient::new(internal(channel.clone(), hop_secret.as_ref())),
        );
        background.spawn(watch(
            controller.clone(),
            gateway.clone(),
            channel,
            shutdown.clone(),
        ));
    }
    background.spawn(tell_phones_of_holds(controller, clients, shutdown));
}

/// Follows one gateway's device events, reconnecting while it is unreachable.
async fn watch(
    controller: Arc<Controller>,
    gateway: String,
    channel: Channel,
    shutdown: CancellationToken,
) {
    let hop_secret = controller.hop_secret();
    let backend: Arc<dyn Backend> =
        Arc::new(GrpcBackend::with_hop_secret(channel.clone(), hop_secret));
    let screencast: Arc<dyn Screencast> =
        Arc::new(GrpcScreencast::new(internal(channel.clone(), hop_secret)));
    let mut client = DeviceGatewayClient::new(internal(channel, hop_secret));
    let mut backoff = Duration::from_millis(100);
    while !shutdown.is_cancelled() {
        let events = tokio::select! {
            _ = shutdown.cancelled() => return,
            events = client.watch_devices(WatchDevicesRequest {}) => events,
        };
        match events {
            Ok(events) => {
                tracing::info!(gateway, "watching the gateway's phones");
                backoff = Duration::from_millis(100);
                let mut events = events.into_inner();
                loop {
                    let event = tokio::select! {
                        _ = shutdown.cancelled() => return,
                        event = events.message() => event,
                    };
                    match event {
                        Ok(Some(event)) => {
                            on_event(&controller, &gateway, (&backend, &screencast), event).await
                        }
                        Ok(None) | Err(_) => break,
                    }
                }
            }
            // Not a passing outage: the two sides were given different hop secrets.
            Err(status) if status.code() == tonic::Code::Unauthenticated => {
                tracing::warn!(gateway, %status, "the gateway refused the controller")
            }
            Err(status) => tracing::debug!(gateway, %status, "gateway not reachable"),
        }
        controller.devices.gateway_gone(&gateway);
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

async fn on_event(
    controller: &Controller,
    gateway: &str,
    (backend, screencast): (&Arc<dyn Backend>, &Arc<dyn Screencast>),
    event: DeviceEvent,
) {
    let devices = &controller.devices;
    let tenant = event.tenant.as_str();
    let outcome = match event.kind.as_str() {
        "connected" if event.browser => {
            tracing::info!(tenant, device = %event.device_id, "phone with a browser connected");
            devices.connected(
                tenant,
                Phone {
                    device_id: event.device_id,
                    gateway: gateway.to_string(),
                    backend: backend.clone(),
                    screencast: Some(screencast.clone()),
                    turn: Arc::new(Semaphore::new(1)),
                },
            );
            Ok(())
        }
        "connected" => Ok(()),
        "left" => {
            tracing::info!(tenant, device = %event.device_id, "phone left");
            devices.left(tenant, &event.device_id);
            Ok(())
        }
        "take_over" => {
            let reason = if event.reason.is_empty() {
                "You took over on your phone"
            } else {
                &event.reason
            };
            controller
                .holds
                .open(tenant, &event.thread, reason, OpenedBy::User)
                .await
                .map(drop)
        }
        "handed_back" => match controller.holds.hand_back(tenant, &event.thread).await {
            // Done was pressed elsewhere first: nothing left to do.
            Err(ControllerError::Conflict(_)) => Ok(()),
            other => other.map(drop),
        },
        other => {
            tracing::warn!(gateway, kind = other, "unknown device event");
            Ok(())
        }
    };
    if let Err(error) = outcome {
        tracing::warn!(gateway, %error, "device event not applied");
    }
}

/// Passes every hold change to the gateways of the tenant's phones; the one showing the
/// thread's page tells the phone.
async fn tell_phones_of_holds(
    controller: Arc<Controller>,
    clients: HashMap<String, DeviceGatewayClient<InternalChannel>>,
    shutdown: CancellationToken,
) {
    let mut changes = controller.holds.changes();
    loop {
        let change = tokio::select! {
            _ = shutdown.cancelled() => return,
            change = changes.recv() => change,
        };
        let change = match change {
            Ok(change) => change,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
            Err(_) => return,
        };
        for gateway in controller.devices.gateways_of(&change.tenant) {
            let Some(client) = clients.get(&gateway) else {
                continue;
            };
            let notice = HoldNotice {
                tenant: change.tenant.clone(),
                thread: change.hold.thread.clone(),
                hold_id: change.hold.id.clone(),
                open: change.hold.is_open(),
                reason: change.hold.reason.clone(),
            };
            if let Err(status) = client.clone().notify_hold(notice).await {
                tracing::warn!(gateway, %status, "hold notice not delivered");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A phone whose backend is never called here.
    fn phone(id: &str, gateway: &str) -> Phone {
        let channel = Channel::from_static("http://127.0.0.1:9").connect_lazy();
        Phone {
            device_id: id.into(),
            gateway: gateway.into(),
            backend: Arc::new(GrpcBackend::new(channel)),
            screencast: None,
            turn: Arc::new(Semaphore::new(1)),
        }
    }

    #[tokio::test]
    async fn the_most_recent_phone_is_used_and_a_lost_gateway_takes_its_phones_along() {
        let devices = Devices::default();
        devices.connected("acme", phone("old", "g1"));
        devices.connected("acme", phone("new", "g2"));
        assert_eq!(devices.browser_of("acme").unwrap().device_id, "new");
        assert!(devices.browser_of("other").is_none());
        devices.gateway_gone("g2");
        assert_eq!(devices.browser_of("acme").unwrap().device_id, "old");
        devices.left("acme", "old");
        assert!(devices.browser_of("acme").is_none());
    }
}
