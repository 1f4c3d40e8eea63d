//! The holder's input on the page: each call carries out one input and answers with the frame
//! after it.

use axum::Json;
use axum::extract::Path;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ApiResult, Body, Caller, FrameView, Http};
use crate::takeover::UserInput;

async fn carry_out(
    http: Http,
    tenant: String,
    thread: String,
    input: UserInput,
) -> ApiResult<Json<Value>> {
    let frame = http.controller.user_input(&tenant, &thread, input).await?;
    Ok(Json(json!({"frame": FrameView::from(&frame)})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tap {
    x: f64,
    y: f64,
}

pub async fn tap(
    http: Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
    Body(Tap { x, y }): Body<Tap>,
) -> ApiResult<Json<Value>> {
    carry_out(http, tenant, thread, UserInput::Tap { x, y }).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Text {
    text: String,
}

pub async fn type_text(
    http: Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
    Body(Text { text }): Body<Text>,
) -> ApiResult<Json<Value>> {
    carry_out(http, tenant, thread, UserInput::Type { text }).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Key {
    key: String,
}

pub async fn key(
    http: Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
    Body(Key { key }): Body<Key>,
) -> ApiResult<Json<Value>> {
    carry_out(http, tenant, thread, UserInput::Key { key }).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Open {
    url: String,
}

pub async fn open(
    http: Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
    Body(Open { url }): Body<Open>,
) -> ApiResult<Json<Value>> {
    carry_out(http, tenant, thread, UserInput::Open { url }).await
}

pub async fn back(
    http: Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
) -> ApiResult<Json<Value>> {
    carry_out(http, tenant, thread, UserInput::Back).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scroll {
    dy: f64,
}

pub async fn scroll(
    http: Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
    Body(Scroll { dy }): Body<Scroll>,
) -> ApiResult<Json<Value>> {
    carry_out(http, tenant, thread, UserInput::Scroll { dy }).await
}
