//! One `[[scenario]]`: method, path, body, load model, stop rule and the clients that
//! run it, checked and resolved against `[run]` and the defined clients.

use super::error::Problem;
use super::limits::MAX_BODY_BYTES;
use super::raw::{At, RawScenario, SizeInput};
use super::units::parse_size;
use super::validate::{
    int_in, missing, opt_duration, required_name, split_fix, stop_rule, RunDefaults,
    DEFAULT_MAX_IN_FLIGHT, MAX_PATH_CHARS, MAX_RATE, MAX_WORKERS,
};
use super::{Load, Method, Scenario};

pub(super) fn build_scenario(
    s: &RawScenario,
    run: &RunDefaults,
    clients: &[&str],
) -> Result<Scenario, Problem> {
    let path = |field: &str| format!("{}.{field}", s.label);
    let name = required_name(
        s.name.as_ref(),
        &s.span,
        &s.label,
        "scenario",
        "name = \"get-22b\"",
    )?;
    let method = match &s.method {
        None => Method::Get,
        Some(m) => parse_method(&m.value).ok_or_else(|| {
            Problem::new(
                m.span.clone(),
                path("method"),
                format!("unknown method {:?}", m.value),
                "use one of GET, HEAD, POST, PUT, DELETE",
            )
        })?,
    };
    let target = s.path.as_ref().ok_or_else(|| {
        missing(
            &s.span,
            &path("path"),
            "path",
            "path = \"/bytes/22\"",
            "[[scenario]]",
        )
    })?;
    check_path(target, &path("path"))?;
    let body = match &s.body {
        None => 0,
        Some(b) => body(b, method, &path("body"))?,
    };
    let load = load(s, &path)?;
    let warmup = opt_duration(s.warmup.as_ref(), &path("warmup"), false)?.unwrap_or(run.warmup);
    let stop = stop_rule(
        s.duration.as_ref(),
        s.requests.as_ref(),
        &s.label,
        "a [[scenario]]",
    )?
    .unwrap_or(run.stop);
    let timeout = opt_duration(s.timeout.as_ref(), &path("timeout"), true)?.unwrap_or(run.timeout);
    let clients = resolve_clients(s.clients.as_ref(), clients, &path("clients"))?;
    Ok(Scenario {
        name,
        method,
        path: target.value.clone(),
        body,
        load,
        warmup,
        stop,
        timeout,
        clients,
    })
}

fn parse_method(text: &str) -> Option<Method> {
    match text.to_ascii_uppercase().as_str() {
        "GET" => Some(Method::Get),
        "HEAD" => Some(Method::Head),
        "POST" => Some(Method::Post),
        "PUT" => Some(Method::Put),
        "DELETE" => Some(Method::Delete),
        _ => None,
    }
}

fn check_path(p: &At<String>, field: &str) -> Result<(), Problem> {
    let v = &p.value;
    let problem =
        |message: String, fix: &str| Err(Problem::new(p.span.clone(), field, message, fix));
    if !v.starts_with('/') {
        return problem(
            format!("the path {v:?} does not start with \"/\""),
            &format!("write it as path = \"/{}\"", v.trim_start_matches('/')),
        );
    }
    if v.chars().count() > MAX_PATH_CHARS {
        return problem(
            format!("the path is longer than {MAX_PATH_CHARS} characters"),
            "use a shorter path",
        );
    }
    if v.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return problem(
            format!("the path {v:?} contains whitespace or a control character"),
            "percent-encode it (a space is %20)",
        );
    }
    if !v.is_ascii() || v.parse::<http::uri::PathAndQuery>().is_err() {
        return problem(
            format!("the path {v:?} is not a valid HTTP request path"),
            "percent-encode characters outside ASCII letters, digits and -._~/?=&%",
        );
    }
    Ok(())
}

/// A request body's size, at most [`MAX_BODY_BYTES`].
fn body(b: &At<SizeInput>, method: Method, field: &str) -> Result<u64, Problem> {
    if !matches!(method, Method::Post | Method::Put) {
        return Err(Problem::new(
            b.span.clone(),
            field,
            format!(
                "a body needs method PUT or POST, but method is {}",
                method.as_str()
            ),
            "set method = \"PUT\" or remove body",
        ));
    }
    let bytes = match &b.value {
        SizeInput::Bytes(n) => u64::try_from(*n).map_err(|_| {
            Problem::new(
                b.span.clone(),
                field,
                format!("a body size cannot be negative, got {n}"),
                "write a size like body = \"1MiB\" or body = 1024",
            )
        })?,
        SizeInput::Text(t) => parse_size(t).map_err(|msg| {
            let (message, fix) =
                split_fix(&msg, "write a size like body = \"1MiB\" or body = 1024");
            Problem::new(b.span.clone(), field, message, fix)
        })?,
    };
    if bytes > MAX_BODY_BYTES {
        const MIB: f64 = 1024.0 * 1024.0;
        return Err(Problem::new(
            b.span.clone(),
            field,
            format!(
                "the body is {bytes} bytes ({:.1} MiB), over the limit of {MAX_BODY_BYTES} bytes ({} MiB): a larger upload measures copying through the loopback interface, not the client",
                bytes as f64 / MIB,
                MAX_BODY_BYTES / (1024 * 1024)
            ),
            "use body = \"256MiB\" or less",
        ));
    }
    Ok(bytes)
}

fn load(s: &RawScenario, path: &dyn Fn(&str) -> String) -> Result<Load, Problem> {
    match (&s.concurrency, &s.rate) {
        (Some(_), Some(rate)) => Err(Problem::new(
            rate.span.clone(),
            path("rate"),
            "concurrency and rate are both set; concurrency is a closed loop, rate an open loop",
            "keep one: remove rate for a closed loop, or remove concurrency for an open loop",
        )),
        (_, None) if s.max_in_flight.is_some() => {
            let m = s.max_in_flight.as_ref().expect("checked by the guard");
            Err(Problem::new(
                m.span.clone(),
                path("max_in_flight"),
                "max_in_flight only applies to an open loop (rate)",
                "remove max_in_flight, or set rate = ... instead of concurrency",
            ))
        }
        (Some(c), None) => Ok(Load::Closed {
            concurrency: workers(c, &path("concurrency"), "concurrency = 10")?,
        }),
        (None, None) => Ok(Load::Closed { concurrency: 1 }),
        (None, Some(rate)) => {
            let r = rate.value;
            if !r.is_finite() || r <= 0.0 || r > MAX_RATE {
                return Err(Problem::new(
                    rate.span.clone(),
                    path("rate"),
                    format!(
                        "rate must be above 0 and at most {MAX_RATE} requests per second, got {r}"
                    ),
                    "set a rate like rate = 2000",
                ));
            }
            let max_in_flight = match &s.max_in_flight {
                Some(m) => workers(m, &path("max_in_flight"), "max_in_flight = 256")?,
                None => DEFAULT_MAX_IN_FLIGHT,
            };
            Ok(Load::Open {
                rate: r,
                max_in_flight,
            })
        }
    }
}

/// A worker (connection) count: 1 to [`MAX_WORKERS`].
fn workers(v: &At<i64>, field: &str, example: &str) -> Result<u32, Problem> {
    if v.value > i64::from(MAX_WORKERS) {
        return Err(Problem::new(
            v.span.clone(),
            field,
            format!(
                "{} connections is more than benchgate drives in one trial ({MAX_WORKERS} at most: each needs an open file in the driver and in the server)",
                v.value
            ),
            format!("set at most {MAX_WORKERS}, like {example}"),
        ));
    }
    Ok(int_in(v, field, 1, i64::from(MAX_WORKERS), example)? as u32)
}

fn resolve_clients(
    list: Option<&At<Vec<At<String>>>>,
    clients: &[&str],
    field: &str,
) -> Result<Vec<String>, Problem> {
    let Some(list) = list else {
        return Ok(clients.iter().map(|c| c.to_string()).collect());
    };
    if list.value.is_empty() {
        return Err(Problem::new(
            list.span.clone(),
            field,
            "the client list is empty, so nothing would run",
            "list at least one client, or remove clients to run every client",
        ));
    }
    let mut out: Vec<String> = Vec::with_capacity(list.value.len());
    for (i, item) in list.value.iter().enumerate() {
        if !clients.contains(&item.value.as_str()) {
            return Err(Problem::new(
                item.span.clone(),
                format!("{field}[{i}]"),
                format!(
                    "no client is named {:?}; defined clients: {}",
                    item.value,
                    quoted(clients)
                ),
                format!(
                    "use one of the defined names, or add a [[client]] with name = {:?}",
                    item.value
                ),
            ));
        }
        if out.contains(&item.value) {
            return Err(Problem::new(
                item.span.clone(),
                format!("{field}[{i}]"),
                format!("client {:?} is listed twice", item.value),
                "list each client once",
            ));
        }
        out.push(item.value.clone());
    }
    Ok(out)
}

fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_are_case_insensitive() {
        assert_eq!(parse_method("get"), Some(Method::Get));
        assert_eq!(parse_method("Delete"), Some(Method::Delete));
        assert_eq!(parse_method("PATCH"), None);
    }

    #[test]
    fn paths_with_query_strings_are_fine() {
        let at = |v: &str| At {
            value: v.to_string(),
            span: 0..1,
        };
        assert!(check_path(&at("/sha1?size=8192"), "p").is_ok());
        assert!(check_path(&at("/a%20b"), "p").is_ok());
        assert!(check_path(&at("x"), "p")
            .unwrap_err()
            .fix
            .contains("path = \"/x\""));
    }
}
