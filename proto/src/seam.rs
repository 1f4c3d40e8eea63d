//! The seam, declared once: the 15 ops of `BrowserBackend` as one list ([`for_each_op!`]), from
//! which the [`Backend`] trait, the [`Op`] trait of every request, the gRPC client and server
//! adapters and every wrapper follow. Adding an op is one line here (and its messages and rpc
//! in the `.proto`); every implementation that lacks it then fails to compile.

use std::future::Future;
use std::pin::Pin;

use crate::BackendError;
use crate::v1::*;

/// Calls `$callback! { [extra…] method(Request) -> Reply, "name"; … }` with the 15 ops, in
/// the order of the `.proto`; `extra` is whatever followed the callback's path, passed along.
#[macro_export]
macro_rules! for_each_op {
    ($callback:path $(, $($extra:tt)*)?) => {
        $callback! {
            [$($($extra)*)?]
            open($crate::v1::OpenRequest) -> $crate::v1::OpenReply, "open";
            navigate($crate::v1::NavigateRequest) -> $crate::v1::NavigateReply, "navigate";
            evaluate($crate::v1::EvaluateRequest) -> $crate::v1::EvaluateReply, "evaluate";
            tap($crate::v1::TapRequest) -> $crate::v1::TapReply, "tap";
            r#type($crate::v1::TypeRequest) -> $crate::v1::TypeReply, "type";
            key($crate::v1::KeyRequest) -> $crate::v1::KeyReply, "key";
            scroll($crate::v1::ScrollRequest) -> $crate::v1::ScrollReply, "scroll";
            back($crate::v1::BackRequest) -> $crate::v1::BackReply, "back";
            settle($crate::v1::SettleRequest) -> $crate::v1::SettleReply, "settle";
            screenshot($crate::v1::ScreenshotRequest) -> $crate::v1::ScreenshotReply, "screenshot";
            state($crate::v1::StateRequest) -> $crate::v1::StateReply, "state";
            fetch($crate::v1::FetchRequest) -> $crate::v1::FetchReply, "fetch";
            profile($crate::v1::ProfileRequest) -> $crate::v1::ProfileReply, "profile";
            close($crate::v1::CloseRequest) -> $crate::v1::CloseReply, "close";
            upload($crate::v1::UploadRequest) -> $crate::v1::UploadReply, "upload";
        }
    };
}

/// What an op's call returns: boxed, as `async_trait` makes it, so `dyn Backend` works.
pub type OpFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, BackendError>> + Send + 'a>>;

/// One op's request: its name, its reply and how a [`Backend`] runs it. Lets a cross-cutting
/// concern (tracing, metrics, forwarding to a phone) be written once, generically, and
/// implemented for every op by [`backend_through!`].
pub trait Op: Send + Sync + Sized + 'static {
    /// The op's name in the protocol and in spans, metrics and errors.
    const NAME: &'static str;
    type Reply: Send + 'static;
    /// The session the request carries, if any (every valid one carries one).
    fn session(&self) -> Option<&Session>;
    fn set_session(&mut self, session: Session);
    /// This op on `backend`.
    fn run<B: Backend + ?Sized>(self, backend: &B) -> OpFuture<'_, Self::Reply>;
}

macro_rules! declare {
    ([] $($method:ident($request:ty) -> $reply:ty, $name:literal;)*) => {
        /// The 15 ops: the spec's 14, and upload. Every request carries its [`Session`].
        #[tonic::async_trait]
        pub trait Backend: Send + Sync + 'static {
            $(async fn $method(&self, request: $request) -> Result<$reply, BackendError>;)*
        }

        $(impl Op for $request {
            const NAME: &'static str = $name;
            type Reply = $reply;
            fn session(&self) -> Option<&Session> {
                self.session.as_ref()
            }
            fn set_session(&mut self, session: Session) {
                self.session = Some(session);
            }
            fn run<B: Backend + ?Sized>(self, backend: &B) -> OpFuture<'_, Self::Reply> {
                backend.$method(self)
            }
        })*

        /// The protocol's names of the 15 ops, in the order of the `.proto`.
        pub const OP_NAMES: [&str; 15] = [$($name),*];
    };
}

for_each_op!(declare);

/// `impl Backend for $type` where every op is `self.$generic(request)`, a method generic over
/// [`Op`] (`async fn $generic<R: Op>(&self, request: R) -> Result<R::Reply, BackendError>`,
/// with whatever further bound it needs on `R`).
#[macro_export]
macro_rules! backend_through {
    ($type:ty, $generic:ident) => {
        $crate::for_each_op!($crate::__backend_through, $type, $generic);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __backend_through {
    ([$type:ty, $generic:ident] $($method:ident($request:ty) -> $reply:ty, $name:literal;)*) => {
        #[$crate::async_trait]
        impl $crate::Backend for $type {
            $(async fn $method(&self, request: $request) -> Result<$reply, $crate::BackendError> {
                self.$generic(request).await
            })*
        }
    };
}
