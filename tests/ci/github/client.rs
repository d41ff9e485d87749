//! A client pointed at the fake, with test timings (no spacing, short backoff,
//! secondary rate limits scaled from a minute to 150 ms).

use std::time::Duration;

use benchgate::github::{GitHub, GitHubConfig, Repo, Token};
use benchgate::retry::RetryPolicy;

use super::fake::{FakeGitHub, REPO};

pub fn config(fake: &FakeGitHub, token: &str) -> GitHubConfig {
    let mut config = GitHubConfig::new(fake.url.clone(), Some(Token::new(token)));
    config.mutation_spacing = Duration::ZERO;
    config.connect_timeout = Duration::from_secs(2);
    config.request_timeout = Duration::from_millis(800);
    config.overall_timeout = Duration::from_secs(15);
    config.retry = RetryPolicy {
        max_attempts: 4,
        base: Duration::from_millis(10),
        cap: Duration::from_millis(100),
        deadline: Duration::from_secs(10),
    };
    config.secondary_limit = RetryPolicy {
        max_attempts: 3,
        base: Duration::from_millis(150),
        cap: Duration::from_millis(300),
        deadline: Duration::from_secs(5),
    };
    config
}

pub fn client(fake: &FakeGitHub, token: &str) -> GitHub {
    GitHub::new(config(fake, token)).unwrap()
}

pub fn repo() -> Repo {
    Repo::parse(REPO).unwrap()
}
