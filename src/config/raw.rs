//! Raw serde model of `benchgate.toml`. (Skeleton.)
