//! Lists across pages (`Link: rel="next"`, RFC 8288) and the authenticated
//! identity.

use http::HeaderMap;
use serde::de::DeserializeOwned;

use super::client::{GitHub, Identity, IdentityMode};
use super::error::GitHubError;

impl GitHub {
    /// Every item of a list endpoint, following `Link: rel="next"` for at most
    /// `max_pages` pages; more pages is an error (the list is not known whole).
    pub fn get_all<T: DeserializeOwned>(
        &self,
        first: &str,
        max_pages: usize,
    ) -> Result<Vec<T>, GitHubError> {
        let mut items = Vec::new();
        let mut next = Some(first.to_string());
        let mut pages = 0;
        while let Some(path) = next.take() {
            if pages == max_pages {
                return Err(GitHubError::Invalid(format!(
                    "{first}: more than {max_pages} pages; refusing to act on a partial list"
                )));
            }
            pages += 1;
            let response = self.get(&path)?;
            let mut page: Vec<T> = response.json(&path)?;
            items.append(&mut page);
            next = next_link(&response.headers)
                .map(|url| self.relative(&url))
                .transpose()?;
        }
        Ok(items)
    }

    /// A URL the API gave (a `Link` header) as a path relative to the API URL;
    /// another host is refused, so the token never goes there.
    fn relative(&self, url: &str) -> Result<String, GitHubError> {
        match url.strip_prefix(&self.base) {
            Some(rest) if rest.starts_with('/') => Ok(rest.to_string()),
            _ => Err(GitHubError::Invalid(format!(
                "the API linked to {url:?}, outside {}; not following it",
                self.base
            ))),
        }
    }

    /// The authenticated identity (looked up once; see [`IdentityMode`]).
    pub fn identity(&self) -> Result<Identity, GitHubError> {
        if let Some(id) = self
            .identity
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            return Ok(id);
        }
        let id = match &self.config.identity {
            IdentityMode::Login(login) => Identity {
                login: login.clone(),
                is_bot: login.ends_with("[bot]"),
            },
            IdentityMode::Auto { fallback_bot } => match self.get("/user") {
                Ok(response) => {
                    let user: super::comment::User = response.json("GET /user")?;
                    Identity {
                        is_bot: user.kind == "Bot",
                        login: user.login,
                    }
                }
                Err(e) if matches!(e.status(), Some(403 | 404)) => Identity {
                    login: fallback_bot.clone(),
                    is_bot: true,
                },
                Err(e) => return Err(e),
            },
        };
        *self.identity.lock().unwrap_or_else(|e| e.into_inner()) = Some(id.clone());
        Ok(id)
    }
}

/// The `rel="next"` URL of a `Link` header (RFC 8288).
pub(crate) fn next_link(headers: &HeaderMap) -> Option<String> {
    let link = headers.get(http::header::LINK)?.to_str().ok()?;
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        let is_next = params
            .split(';')
            .any(|p| p.trim().replace(' ', "") == "rel=\"next\"");
        is_next.then(|| {
            url.trim()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_string()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::GitHubConfig;

    #[test]
    fn link_header_next() {
        let mut h = HeaderMap::new();
        h.insert(
            http::header::LINK,
            "<https://api.github.com/x?page=1>; rel=\"prev\", <https://api.github.com/x?page=3>; rel=\"next\""
                .parse()
                .unwrap(),
        );
        assert_eq!(
            next_link(&h).as_deref(),
            Some("https://api.github.com/x?page=3")
        );
        assert_eq!(next_link(&HeaderMap::new()), None);
    }

    #[test]
    fn links_elsewhere_are_refused() {
        let gh = GitHub::new(GitHubConfig::new("https://ghe.example/api/v3/", None)).unwrap();
        assert_eq!(
            gh.relative("https://ghe.example/api/v3/repos/a/b?page=2")
                .unwrap(),
            "/repos/a/b?page=2"
        );
        assert!(gh.relative("https://evil.example/api/v3/repos").is_err());
        assert!(gh.relative("https://ghe.example/api/v3x/repos").is_err());
    }
}
