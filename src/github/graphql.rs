//! GitHub's GraphQL API, for what REST cannot do: benchgate uses it for one
//! mutation, `updateRefs`, whose `beforeOid` makes a non-fast-forward ref
//! update a true compare-and-swap (REST's `PATCH git/refs/...` with `force`
//! checks nothing).
//!
//! The endpoint follows from the REST base (`GITHUB_API_URL`), as GitHub
//! documents them:
//! - github.com: `https://api.github.com` -> `https://api.github.com/graphql`;
//! - GitHub Enterprise Server: `https://HOST/api/v3` -> `https://HOST/api/graphql`;
//! - any other base (GHE.com's `https://api.SUBDOMAIN.ghe.com`, a proxy, a
//!   test server): the base with `/graphql` appended.
//!
//! A GraphQL answer can be HTTP 200 and still a failure: its `errors` list is
//! turned into [`GitHubError::GraphQl`]. Calls go through the client's policy
//! like REST calls: a mutation counts against the run's mutation cap, and a
//! POST that failed after it was sent is [`GitHubError::Ambiguous`].

use http::Method;
use serde_json::{json, Value};

use super::client::{Api, GitHub};
use super::error::GitHubError;

/// The path of the GraphQL endpoint under [`graphql_base`].
pub const GRAPHQL_PATH: &str = "/graphql";

/// The base URL of the GraphQL endpoint for the REST base `rest_base` (see the
/// module docs): the endpoint is this plus [`GRAPHQL_PATH`].
pub fn graphql_base(rest_base: &str) -> String {
    let base = rest_base.trim().trim_end_matches('/');
    match base.strip_suffix("/api/v3") {
        Some(host) => format!("{host}/api"),
        None => base.to_string(),
    }
}

impl GitHub {
    /// Sends a GraphQL `query` (or mutation) with `variables`; the answer's
    /// `data` when it holds no `errors`. `operation` names the call in errors.
    pub fn graphql(
        &self,
        operation: &str,
        query: &str,
        variables: Value,
    ) -> Result<Value, GitHubError> {
        let body = json!({ "query": query, "variables": variables });
        let response = self.send_to(Api::GraphQl, Method::POST, GRAPHQL_PATH, Some(&body))?;
        let answer: Value = response.json(&format!("GraphQL {operation}"))?;
        if let Some(errors) = answer["errors"].as_array().filter(|e| !e.is_empty()) {
            let described: Vec<String> = errors.iter().map(describe_error).collect();
            return Err(GitHubError::GraphQl {
                operation: operation.to_string(),
                message: self.redact(&described.join("; ")),
            });
        }
        match answer.get("data") {
            Some(data) if !data.is_null() => Ok(data.clone()),
            _ => Err(GitHubError::Invalid(format!(
                "GraphQL {operation}: the answer has neither data nor errors"
            ))),
        }
    }
}

/// One entry of a GraphQL `errors` list: `TYPE: message`, or the message alone.
fn describe_error(error: &Value) -> String {
    let message = error["message"].as_str().unwrap_or("(no message)");
    match error["type"].as_str() {
        Some(kind) => format!("{kind}: {message}"),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_follows_the_rest_base() {
        assert_eq!(
            graphql_base("https://api.github.com"),
            "https://api.github.com"
        );
        assert_eq!(
            graphql_base("https://api.github.com/"),
            "https://api.github.com"
        );
        assert_eq!(
            graphql_base("https://ghe.example.com/api/v3"),
            "https://ghe.example.com/api"
        );
        assert_eq!(
            graphql_base("https://ghe.example.com/api/v3/"),
            "https://ghe.example.com/api"
        );
        assert_eq!(
            graphql_base("https://api.octo.ghe.com"),
            "https://api.octo.ghe.com"
        );
    }

    #[test]
    fn errors_read_as_type_and_message() {
        let typed = json!({ "type": "NOT_FOUND", "message": "Could not resolve" });
        assert_eq!(describe_error(&typed), "NOT_FOUND: Could not resolve");
        assert_eq!(describe_error(&json!({ "message": "m" })), "m");
    }
}
