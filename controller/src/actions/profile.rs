//! `profile mobile|desktop|custom`: how the page presents itself, switched live; the thread
//! keeps it for its later pages.

use nanomuse_proto::profile_action::Kind;
use nanomuse_proto::{ActReply, ProfileAction, ProfileRequest};

use super::Ctx;
use crate::error::{ControllerError, Result};
use crate::store::ProfileSetting;

use nanomuse_proto::limits::VIEWPORT_PX as CUSTOM_SIZE;

pub async fn run(ctx: &mut Ctx<'_>, action: ProfileAction) -> Result<ActReply> {
    let setting = match action.kind {
        Some(Kind::Mobile(_)) => ProfileSetting::mobile(),
        Some(Kind::Desktop(_)) => ProfileSetting::desktop(),
        Some(Kind::Custom(custom)) => {
            // A custom profile names its size: 0 is not "the default" here, as it is for the
            // presets' stored settings.
            for (name, value) in [("width", custom.width), ("height", custom.height)] {
                if !CUSTOM_SIZE.contains(&value) {
                    return Err(ControllerError::InvalidArgument(format!(
                        "a custom profile's {name} {value} is out of range: give a viewport of \
                         {}..={} CSS px",
                        CUSTOM_SIZE.start(),
                        CUSTOM_SIZE.end()
                    )));
                }
            }
            ProfileSetting {
                mobile: custom.mobile,
                user_agent: custom.user_agent,
                width: custom.width,
                height: custom.height,
            }
        }
        None => {
            return Err(ControllerError::InvalidArgument(
                "profile takes mobile, desktop, or a user agent with a width and height".into(),
            ));
        }
    };
    on_page!(ctx, {
        ctx.backend
            .profile(ProfileRequest {
                session: ctx.session(),
                user_agent: setting.user_agent.clone(),
                width: setting.width,
                height: setting.height,
                mobile: setting.mobile,
            })
            .await
    })?;
    ctx.record.profile = setting;
    ctx.store.put_thread(ctx.tenant, ctx.thread, &ctx.record)?;
    ctx.store.flush().await?;
    let (listing, frame) = ctx.look("Switched profile".into()).await?;
    let size = frame_size(&frame);
    let kind = if ctx.record.profile.mobile {
        "mobile"
    } else {
        "desktop"
    };
    Ok(ctx.page_reply(
        format!("Now presenting as {kind} ({size})."),
        listing,
        frame,
    ))
}

fn frame_size(frame: &nanomuse_proto::FrameRef) -> String {
    format!("{}×{}", frame.width, frame.height)
}
