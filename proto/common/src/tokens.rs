//! Tenant and device tokens at rest: what a file or a configuration keeps is the token's
//! SHA-256 digest (`"sha256:<64 hex digits>" = "tenant"`), so a copy of the file lets no one in.
//! A presented token is hashed and its digest compared with every known one in constant time.
//!
//! Secrets files (`NANOMUSE_TOKENS_FILE`, `NANOMUSE_DEVICE_TOKENS_FILE`: what a hosted
//! deployment uses) hold digests only; a token in plaintext there stops the program. An inline
//! configuration table (`[controller.tokens]`, `[gateway.device_tokens]`, `--device-token`)
//! may still hold a plaintext token, for local runs and tests; the programs warn about it.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::names::check_name;

/// How a stored digest starts.
pub const DIGEST_PREFIX: &str = "sha256:";

/// The shortest plaintext token taken: a shorter one could be guessed.
pub const TOKEN_MIN_CHARS: usize = 16;

pub(crate) fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// `sha256:<hex>` of `token`: what a token file keeps in place of the token.
pub fn token_digest(token: &str) -> String {
    let hex: String = sha256(token.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("{DIGEST_PREFIX}{hex}")
}

/// The 32 bytes of `sha256:<64 hex digits>`, or `None` when `entry` is not one.
fn parse_digest(entry: &str) -> Option<[u8; 32]> {
    let hex = entry.strip_prefix(DIGEST_PREFIX)?.as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let mut digest = [0u8; 32];
    for (byte, pair) in digest.iter_mut().zip(hex.chunks(2)) {
        *byte = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(digest)
}

/// Whether a source of tokens may hold them in plaintext.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plaintext {
    /// A secrets file: digests only.
    Refused,
    /// An inline configuration table or a flag: taken, and counted so the program can warn.
    Allowed,
}

/// Known tokens, by digest, with their tenants. Never holds a token itself.
#[derive(Clone, Default)]
pub struct TokenTable {
    entries: Vec<([u8; 32], String)>,
    plaintext: usize,
}

impl std::fmt::Debug for TokenTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TokenTable({} tokens)", self.entries.len())
    }
}

impl TokenTable {
    /// The table of `entries` (a digest or, where `plaintext` allows, a token → its tenant);
    /// `source` names where they came from in the errors, which never quote a token.
    pub fn from_entries(
        entries: &HashMap<String, String>,
        source: &str,
        plaintext: Plaintext,
    ) -> Result<Self, String> {
        // Sorted, so the same bad input always gives the same error.
        let sorted: BTreeMap<_, _> = entries.iter().collect();
        let mut table = TokenTable::default();
        let mut tenant_of: HashMap<[u8; 32], &str> = HashMap::new();
        for (entry, tenant) in sorted {
            check_name("tenant", tenant).map_err(|e| format!("{source}: {e}"))?;
            let digest = if entry.starts_with(DIGEST_PREFIX) {
                parse_digest(entry).ok_or_else(|| {
                    format!(
                        "{source}: the entry of tenant {tenant:?} starts with {DIGEST_PREFIX} but \
                         is not followed by 64 hex digits"
                    )
                })?
            } else if plaintext == Plaintext::Refused {
                return Err(format!(
                    "{source}: the entry of tenant {tenant:?} is a token in plaintext; this file \
                     holds digests only: put `{DIGEST_PREFIX}<hex>` there (`nanomuse-browser \
                     hash-token` prints it)"
                ));
            } else if entry.chars().count() < TOKEN_MIN_CHARS {
                return Err(format!(
                    "{source}: the token of tenant {tenant:?} is shorter than {TOKEN_MIN_CHARS} \
                     characters"
                ));
            } else {
                table.plaintext += 1;
                sha256(entry.as_bytes())
            };
            match tenant_of.insert(digest, tenant) {
                Some(other) if other != tenant.as_str() => {
                    return Err(format!(
                        "{source}: one token is given to two tenants, {other:?} and {tenant:?}"
                    ));
                }
                Some(_) => {}
                None => table.entries.push((digest, tenant.clone())),
            }
        }
        Ok(table)
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// How many entries were given as plaintext tokens (worth a warning).
    pub fn plaintext_count(&self) -> usize {
        self.plaintext
    }

    /// The tenant of `presented`. Its digest is compared with every known digest, each in
    /// constant time and without stopping at a match, so the time taken tells nothing about
    /// how close a guess came nor which entry matched.
    pub fn tenant_of(&self, presented: &str) -> Option<&str> {
        let digest = sha256(presented.as_bytes());
        let mut found = None;
        for (known, tenant) in &self.entries {
            if bool::from(known.ct_eq(&digest)) {
                found = Some(tenant.as_str());
            }
        }
        found
    }
}

/// Reads a secrets file of token digests: a TOML table of `"sha256:<hex>" = "tenant"` lines.
/// A token in plaintext there, a bad digest or a bad tenant name is an error naming the file.
pub fn read_token_file(path: &Path) -> Result<HashMap<String, String>, String> {
    let source = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {source}: {e}"))?;
    let entries: HashMap<String, String> = toml::from_str(&text).map_err(|e| {
        format!("{source}: not a table of \"{DIGEST_PREFIX}<hex>\" = \"tenant\" lines: {e}")
    })?;
    TokenTable::from_entries(&entries, &source, Plaintext::Refused)?;
    Ok(entries)
}

/// Adds the entries of a token file to a configuration's own; an entry both give to
/// different tenants is an error.
pub fn merge_token_entries(
    into: &mut HashMap<String, String>,
    file_entries: HashMap<String, String>,
    source: &str,
) -> Result<(), String> {
    for (entry, tenant) in file_entries {
        match into.get(&entry) {
            Some(other) if *other != tenant => {
                return Err(format!(
                    "{source}: a digest there is given to tenant {tenant:?}, and to {other:?} \
                     in the configuration"
                ));
            }
            _ => {
                into.insert(entry, tenant);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_digest_admits_its_token_and_not_itself() {
        let token = "a-long-enough-token-0001";
        let digest = token_digest(token);
        // `printf %s a-long-enough-token-0001 | sha256sum` says the same.
        assert_eq!(
            digest,
            "sha256:7dbf0126c1ed7e7bb09ac794bd62701e45fa3e3638db0b93e7bc037a36eeb54d"
        );
        let table =
            TokenTable::from_entries(&entries(&[(&digest, "acme")]), "f", Plaintext::Refused)
                .unwrap();
        assert_eq!(table.tenant_of(token), Some("acme"));
        assert_eq!(
            table.tenant_of(&digest),
            None,
            "the file's content is no token"
        );
        assert_eq!(table.tenant_of("a-long-enough-token-0002"), None);
        assert_eq!(table.plaintext_count(), 0);
    }

    #[test]
    fn plaintext_is_refused_where_digests_belong_and_counted_elsewhere() {
        let plain = entries(&[("a-long-enough-token-0001", "acme")]);
        let refused =
            TokenTable::from_entries(&plain, "tokens.toml", Plaintext::Refused).unwrap_err();
        assert!(refused.contains("tokens.toml") && refused.contains("plaintext"));
        assert!(!refused.contains("a-long-enough-token-0001"), "{refused}");
        let table = TokenTable::from_entries(&plain, "c", Plaintext::Allowed).unwrap();
        assert_eq!(table.plaintext_count(), 1);
        assert_eq!(table.tenant_of("a-long-enough-token-0001"), Some("acme"));

        for (bad, why) in [
            (entries(&[("short", "acme")]), "shorter"),
            (entries(&[("sha256:abc", "acme")]), "64 hex"),
            (entries(&[("a-long-enough-token-0001", "../etc")]), "tenant"),
            (
                entries(&[
                    ("a-long-enough-token-0001", "a"),
                    (&token_digest("a-long-enough-token-0001"), "b"),
                ]),
                "two tenants",
            ),
        ] {
            let error = TokenTable::from_entries(&bad, "c", Plaintext::Allowed).unwrap_err();
            assert!(error.contains(why), "{error}");
        }
    }

    #[test]
    fn a_token_file_reads_digests_and_refuses_plaintext() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.toml");
        let digest = token_digest("a-long-enough-token-0001");
        std::fs::write(&good, format!("# comment\n\"{digest}\" = \"acme\"\n")).unwrap();
        assert_eq!(read_token_file(&good).unwrap()[&digest], "acme");
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "\"a-long-enough-token-0001\" = \"acme\"\n").unwrap();
        let error = read_token_file(&bad).unwrap_err();
        assert!(
            error.contains("bad.toml") && error.contains("plaintext"),
            "{error}"
        );
    }
}
