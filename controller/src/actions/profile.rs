//! `profile mobile|desktop|custom`: how the page presents itself, switched live; the thread
//! keeps it for its later pages.

use nanomuse_proto::profile_action::Kind;
use nanomuse_proto::{ActReply, ProfileAction, ProfileRequest};

use super::Ctx;
use crate::error::{ControllerError, Result};
use crate::store::ProfileSetting;

use nanomuse_common::limits::VIEWPORT_PX as CUSTOM_SIZE;

pub async fn run(ctx: &mut Ctx<'_>, action: ProfileAction) -> Result<ActReply> {
    let setting = match action.kind {
        Some(Kind::Mobile(_)) => ProfileSetting::mobile(),
        Some(Kind::Desktop(_)) => ProfileSetting::desktop(),
        Some(Kind::Custom(custom)) => {
            // A custom profile names its size: 0 is not "the default" here, as it is for the
            // presets' stored settings.
            for (name, value) in [("width", custom.width), ("height", custom.height)] {
                if value == 0 {
                    return Err(ControllerError::InvalidArgument(format!(
                        "a custom profile needs its {name} too: give width and height ({}..={} \
                         CSS px), or choose mobile or desktop",
                        CUSTOM_SIZE.start(),
                        CUSTOM_SIZE.end()
                    )));
                }
                if !CUSTOM_SIZE.contains(&value) {
                    return Err(ControllerError::InvalidArgument(format!(
                        "a custom profile's {name} {value} is out of range: give a viewport of \
                         {}..={} CSS px",
                        CUSTOM_SIZE.start(),
                        CUSTOM_SIZE.end()
                    )));
                }
            }
            // A size alone keeps the user agent of its kind: a phone's or a desktop's.
            let user_agent = if custom.user_agent.trim().is_empty() {
                let preset = if custom.mobile {
                    ProfileSetting::mobile()
                } else {
                    ProfileSetting::desktop()
                };
                preset.user_agent
            } else {
                custom.user_agent
            };
            ProfileSetting {
                mobile: custom.mobile,
                user_agent,
                width: custom.width,
                height: custom.height,
            }
        }
        None => {
            return Err(ControllerError::InvalidArgument(
                "profile takes mobile, desktop, or a width and height".into(),
            ));
        }
    };
    ctx.op(ProfileRequest {
        session: ctx.session(),
        user_agent: setting.user_agent.clone(),
        width: setting.width,
        height: setting.height,
        mobile: setting.mobile,
    })
    .await?;
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

#[cfg(test)]
mod tests {
    use nanomuse_proto::act_request::Action;
    use nanomuse_proto::{CustomProfile, ProfileAction, ProfileRequest};

    use super::*;
    use crate::testing::*;

    fn profile(kind: Option<Kind>) -> Action {
        Action::Profile(ProfileAction { kind })
    }

    #[tokio::test]
    async fn switches_live_and_the_thread_keeps_it() {
        let h = Harness::showing(&FakePage::new("https://x.example/", "X", &[("link", "A")]));
        let (reply, frame) = h.ok(profile(Some(Kind::Mobile(true)))).await;
        assert_eq!(h.backend.ops(), ["profile", "evaluate"]);
        let asked = &h.backend.requests::<ProfileRequest>()[0];
        assert!(asked.mobile);
        assert_eq!(asked.session, session());
        assert!(
            reply
                .text
                .starts_with("Now presenting as mobile (412×915).\n[1]"),
            "{}",
            reply.text
        );
        assert_eq!(frame.unwrap().caption, "Switched profile");
        let kept = h.store.thread(TENANT, THREAD).unwrap().unwrap();
        assert_eq!(kept.profile, ProfileSetting::mobile());
    }

    #[tokio::test]
    async fn a_custom_profile_names_its_size() {
        let h = Harness::showing(&FakePage::new("https://x.example/", "X", &[]));
        let custom = CustomProfile {
            user_agent: "Bot/1".into(),
            width: 800,
            height: 600,
            mobile: false,
        };
        let (reply, _) = h.ok(profile(Some(Kind::Custom(custom)))).await;
        let asked = &h.backend.requests::<ProfileRequest>()[0];
        assert_eq!(
            (asked.user_agent.as_str(), asked.width, asked.height),
            ("Bot/1", 800, 600)
        );
        assert!(
            reply
                .text
                .starts_with("Now presenting as desktop (800×600).")
        );
    }

    #[tokio::test]
    async fn a_size_alone_keeps_the_user_agent_of_its_kind() {
        let h = Harness::showing(&FakePage::new("https://x.example/", "X", &[]));
        for mobile in [true, false] {
            let custom = CustomProfile {
                width: 390,
                height: 844,
                mobile,
                ..Default::default()
            };
            h.ok(profile(Some(Kind::Custom(custom)))).await;
        }
        let asked = h.backend.requests::<ProfileRequest>();
        assert_eq!(asked[0].user_agent, ProfileSetting::mobile().user_agent);
        assert_eq!(asked[1].user_agent, ProfileSetting::desktop().user_agent);
        assert_eq!((asked[1].width, asked[1].mobile), (390, false));
    }

    #[tokio::test]
    async fn a_size_out_of_range_or_no_kind_changes_nothing() {
        let h = Harness::showing(&FakePage::new("https://x.example/", "X", &[]));
        let tiny = CustomProfile {
            width: 1,
            height: 600,
            ..Default::default()
        };
        let (reply, _) = h.act(profile(Some(Kind::Custom(tiny)))).await;
        assert!(
            matches!(reply, Err(ControllerError::InvalidArgument(ref m)) if m.starts_with("a custom profile's width 1 is out of range")),
            "{reply:?}"
        );
        let (reply, _) = h.act(profile(None)).await;
        assert!(matches!(reply, Err(ControllerError::InvalidArgument(_))));
        assert!(h.backend.ops().is_empty());
        let kept = h.store.thread(TENANT, THREAD).unwrap().unwrap();
        assert_eq!(kept.profile, ProfileSetting::desktop());
    }
}
