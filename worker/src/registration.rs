//! Keeps this worker known to its controller: registers, heartbeats at the interval the
//! controller asks for, and registers again when the controller has forgotten it (it
//! restarted) or could not be reached. On the way out, [`drain`] asks the controller to take
//! this worker's workspaces off it.

use std::sync::Arc;
use std::time::Duration;

use nanomuse_common::HopSecret;
use nanomuse_proto::worker_registry_client::WorkerRegistryClient;
use nanomuse_proto::{DrainReply, DrainRequest, HeartbeatRequest, RegisterWorkerRequest};
use tokio_util::sync::CancellationToken;

use crate::config::WorkerConfig;
use crate::profiles::Pool;

const RETRY: Duration = Duration::from_millis(500);

pub async fn keep_registered(
    config: Arc<WorkerConfig>,
    hop_secret: Option<HopSecret>,
    advertise: String,
    pool: Arc<Pool>,
    shutdown: CancellationToken,
) {
    let Ok(endpoint) = tonic::transport::Endpoint::from_shared(config.controller.clone()) else {
        tracing::error!(controller = %config.controller, "bad controller address; not registering");
        return;
    };
    let mut client = WorkerRegistryClient::new(nanomuse_common::hop::internal(
        endpoint.connect_lazy(),
        hop_secret.as_ref(),
    ));
    'register: loop {
        let registered = client
            .register(RegisterWorkerRequest {
                name: config.name.clone(),
                address: advertise.clone(),
                capacity: config.capacity,
            })
            .await;
        let interval = match registered {
            Ok(reply) => {
                tracing::info!(controller = %config.controller, "registered with the controller");
                Duration::from_millis(reply.into_inner().heartbeat_interval_ms.max(50).into())
            }
            Err(status) => {
                if status.code() == tonic::Code::Unauthenticated {
                    // Not a passing outage: the two sides were given different hop secrets.
                    tracing::warn!(%status, "the controller refused the registration; retrying");
                } else {
                    tracing::debug!(%status, "controller not reachable; retrying");
                }
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tokio::time::sleep(RETRY) => continue 'register,
                }
            }
        };
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(interval) => {}
            }
            let (browsers, pages) = pool.counts();
            let beat = client
                .heartbeat(HeartbeatRequest {
                    name: config.name.clone(),
                    browsers: browsers as u32,
                    pages: pages as u32,
                })
                .await;
            match beat {
                Ok(reply) if reply.get_ref().known => {}
                _ => continue 'register,
            }
        }
    }
}

/// How long the controller may take to answer at all; one that cannot be reached is not
/// waited for (the profiles then stay on this worker's disk, and its workspaces' actions wait
/// for it to come back).
const CONNECT: Duration = Duration::from_secs(2);

/// Tells the controller this worker is going away and waits, up to `budget`, while it lets
/// the actions on this worker finish and takes the workspaces' profiles (through this
/// worker's `ProfileTransfer`, still served). `None` when the controller could not be asked.
pub async fn drain(
    config: &WorkerConfig,
    hop_secret: Option<&HopSecret>,
    advertise: &str,
    budget: Duration,
) -> Option<DrainReply> {
    let endpoint = tonic::transport::Endpoint::from_shared(config.controller.clone())
        .ok()?
        .connect_timeout(CONNECT);
    let channel = match endpoint.connect().await {
        Ok(channel) => channel,
        Err(error) => {
            tracing::warn!(controller = %config.controller, %error,
                "controller not reachable; draining without it (profiles stay here)");
            return None;
        }
    };
    let mut client = WorkerRegistryClient::new(nanomuse_common::hop::internal(channel, hop_secret));
    // The controller answers within the budget it is given; the rest is the call's margin.
    let given = budget.saturating_sub(Duration::from_secs(1));
    let mut request = tonic::Request::new(DrainRequest {
        name: config.name.clone(),
        budget_ms: given.as_millis().min(u32::MAX as u128) as u32,
        address: advertise.to_string(),
        capacity: config.capacity,
    });
    request.set_timeout(budget);
    match client.drain(request).await {
        Ok(reply) => Some(reply.into_inner()),
        Err(status) => {
            tracing::warn!(%status, "the controller did not drain this worker");
            None
        }
    }
}
