//! The `DeviceGateway` gRPC service for the controller: which phones are connected (and when
//! they come and go, or the user takes over and hands back on one), and hold notices to phones.

use std::pin::Pin;
use std::sync::Arc;

use futures::{Stream, StreamExt, stream};
use nanomuse_proto::device_gateway_server::DeviceGateway;
use nanomuse_proto::*;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use tonic::{Request, Response, Status};

use crate::State;
use crate::protocol::Message;

pub struct DeviceGatewayService {
    pub state: Arc<State>,
}

type Events = Pin<Box<dyn Stream<Item = Result<DeviceEvent, Status>> + Send>>;

#[tonic::async_trait]
impl DeviceGateway for DeviceGatewayService {
    type WatchDevicesStream = Events;

    async fn watch_devices(
        &self,
        _: Request<WatchDevicesRequest>,
    ) -> Result<Response<Events>, Status> {
        let (now, changes) = self.state.phones.watch();
        let changes = BroadcastStream::new(changes).map(|change| match change {
            Ok(event) => Ok(event),
            // The watcher must start again from a fresh list rather than guess.
            Err(BroadcastStreamRecvError::Lagged(n)) => Err(Status::data_loss(format!(
                "{n} device events were missed; watch again"
            ))),
        });
        let events = stream::iter(now.into_iter().map(Ok))
            .chain(changes)
            .take_until(self.state.shutdown.clone().cancelled_owned());
        Ok(Response::new(Box::pin(events)))
    }

    async fn notify_hold(
        &self,
        request: Request<HoldNotice>,
    ) -> Result<Response<HoldNoticeReply>, Status> {
        let notice = request.into_inner();
        let Some(phone) = self.state.phones.showing(&notice.tenant, &notice.thread) else {
            return Ok(Response::new(HoldNoticeReply { delivered: false }));
        };
        let message = Message::Hold(crate::protocol::HoldNotice {
            state: if notice.open { "open" } else { "closed" }.into(),
            hold_id: notice.hold_id,
            reason: (!notice.reason.is_empty()).then_some(notice.reason),
        });
        let delivered = phone.send(message).await;
        Ok(Response::new(HoldNoticeReply { delivered }))
    }
}
