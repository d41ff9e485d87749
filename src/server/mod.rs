//! The reference server. (Skeleton.)
