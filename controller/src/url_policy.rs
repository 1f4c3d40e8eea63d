//! The URL policy on the controller's side: each tenant's policy (the configured one with the
//! tenant's own host lists), which every op carries to its backend in its `Session`, and the
//! check every URL the agent (`navigate`, `fetch`) or the user (the card's Open URL) opens
//! passes before any backend is called — so a refused URL creates no thread, opens no page and
//! changes nothing. The backends enforce the same policy on every later hop; the rules
//! themselves are `nanomuse_proto::url_policy`.

use nanomuse_proto::UrlPolicy;
use nanomuse_proto::act_request::Action;

use crate::config::UrlPolicySection;
use crate::error::Result;

pub struct UrlPolicies {
    section: UrlPolicySection,
}

impl UrlPolicies {
    /// `section.hosted` decided already (see [`UrlPolicySection::decide_hosted`]).
    pub fn new(section: UrlPolicySection) -> Self {
        Self { section }
    }

    /// The policy `tenant`'s ops carry.
    pub fn for_tenant(&self, tenant: &str) -> UrlPolicy {
        self.section.for_tenant(tenant)
    }

    /// Checks the URL an action opens, if it opens one.
    pub async fn check_action(&self, tenant: &str, action: &Action) -> Result<()> {
        match action {
            Action::Navigate(navigate) => self.check(tenant, &navigate.url).await,
            Action::Fetch(fetch) => self.check(tenant, &fetch.url).await,
            _ => Ok(()),
        }
    }

    /// Checks `url` for `tenant`: an absolute http(s) URL to a host the lists allow; in hosted
    /// mode no internal name or address, and a name only when every address it resolves to is
    /// public. (An empty URL is left to the action, which says what to give.)
    pub async fn check(&self, tenant: &str, url: &str) -> Result<()> {
        if url.trim().is_empty() {
            return Ok(());
        }
        let policy = self.for_tenant(tenant);
        let parsed = policy.check_url(url)?;
        if policy.hosted
            && let Some(url::Host::Domain(name)) = parsed.host()
        {
            let port = parsed.port_or_known_default().unwrap_or(80);
            policy.resolve_checked(name, port).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ControllerError;

    fn policies(hosted: bool) -> UrlPolicies {
        UrlPolicies::new(UrlPolicySection {
            hosted: Some(hosted),
            deny_hosts: vec!["blocked.example".into()],
            ..UrlPolicySection::default()
        })
    }

    #[tokio::test]
    async fn refusals_carry_their_rule_as_the_error_kind() {
        let hosted = policies(true);
        for (url, permission) in [
            ("http://10.0.0.5/", true),
            ("http://localhost:8080/", true),
            ("http://blocked.example/", true),
            ("javascript:alert(1)", false),
            ("/relative", false),
        ] {
            let error = hosted.check("t", url).await.unwrap_err();
            let message = error.to_string();
            assert!(
                message.starts_with("Refused by the URL policy: "),
                "{message}"
            );
            match error {
                ControllerError::PermissionDenied(_) => assert!(permission, "{url}"),
                ControllerError::InvalidArgument(_) => assert!(!permission, "{url}"),
                other => panic!("{url}: {other:?}"),
            }
        }
        hosted.check("t", "https://93.184.215.14/").await.unwrap();
        hosted.check("t", "  ").await.unwrap();
        // Not hosted: the machine's own pages are fine; the lists and schemes still hold.
        let local = policies(false);
        local.check("t", "http://127.0.0.1:8000/").await.unwrap();
        local.check("t", "http://localhost:8000/").await.unwrap();
        assert!(local.check("t", "http://blocked.example/").await.is_err());
        assert!(local.check("t", "file:///etc/passwd").await.is_err());
    }
}
