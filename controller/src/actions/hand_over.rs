//! `hand_over reason`: gives the page to the user (a login, a code, a CAPTCHA) and returns at
//! once. The thread's next action waits until the user presses Done, or the hold times out.

use nanomuse_proto::{ActReply, HandOverAction};

use crate::error::Result;
use crate::holds::{Holds, OpenedBy};

pub async fn run(
    holds: &Holds,
    tenant: &str,
    thread: &str,
    action: &HandOverAction,
) -> Result<ActReply> {
    let (hold, opened) = holds
        .open(tenant, thread, &action.reason, OpenedBy::Agent)
        .await?;
    let minutes = holds.timeout().as_secs().div_ceil(60);
    let text = if opened {
        format!(
            "The page is with the user now ({}: {}). Your next browser action on this thread \
             waits until they press Done (at most {minutes} min); do not ask them for passwords \
             or codes.",
            hold.id, hold.reason
        )
    } else {
        format!(
            "The page is already with the user ({}: {}); your next browser action waits until \
             they press Done (at most {minutes} min).",
            hold.id, hold.reason
        )
    };
    Ok(ActReply {
        text,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::error::ControllerError;
    use crate::store::SledStore;

    fn hand_over(reason: &str) -> HandOverAction {
        HandOverAction {
            reason: reason.into(),
        }
    }

    #[tokio::test]
    async fn opens_a_hold_once_and_says_the_next_action_waits() {
        let holds = Holds::load(
            Arc::new(SledStore::temporary().unwrap()),
            Duration::from_secs(300),
        )
        .unwrap();
        let reply = run(&holds, "a", "t", &hand_over("sign in to x.example"))
            .await
            .unwrap();
        let hold = holds.open_hold("a", "t").unwrap();
        assert_eq!(hold.reason, "sign in to x.example");
        assert_eq!(
            reply.text,
            format!(
                "The page is with the user now ({}: sign in to x.example). Your next browser \
                 action on this thread waits until they press Done (at most 5 min); do not ask \
                 them for passwords or codes.",
                hold.id
            )
        );
        let again = run(&holds, "a", "t", &hand_over("other")).await.unwrap();
        assert!(
            again.text.starts_with(&format!(
                "The page is already with the user ({}: sign in to x.example)",
                hold.id
            )),
            "{}",
            again.text
        );
        assert_eq!(holds.open_holds("a").len(), 1);
    }

    #[tokio::test]
    async fn no_reason_opens_no_hold() {
        let holds = Holds::load(
            Arc::new(SledStore::temporary().unwrap()),
            Duration::from_secs(300),
        )
        .unwrap();
        let reply = run(&holds, "a", "t", &hand_over("  ")).await;
        assert!(matches!(reply, Err(ControllerError::InvalidArgument(_))));
        assert!(holds.open_hold("a", "t").is_none());
    }
}
