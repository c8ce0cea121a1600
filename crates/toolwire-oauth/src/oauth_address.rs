//! Which addresses OAuth requests for one MCP server may reach, for the HTTP clients
//! toolwire makes itself (DPoP token requests, revocation): rmcp applies the same policy
//! inside `AuthorizationManager::new`, but keeps its resolver private.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// Where an address is, for deciding whether OAuth requests may go there.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum AddressClass {
    Public,
    Loopback,
    Private,
    /// Link-local (cloud instance metadata among them), unspecified, multicast,
    /// broadcast, reserved: never.
    Blocked,
}

fn address_class(ip: IpAddr) -> AddressClass {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            if v4.is_loopback() {
                AddressClass::Loopback
            } else if v4.is_private() || (a == 100 && (64..=127).contains(&b)) {
                AddressClass::Private
            } else if v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || a == 0
                || a >= 240
                || (a == 198 && (b == 18 || b == 19))
            {
                AddressClass::Blocked
            } else {
                AddressClass::Public
            }
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            if v6.is_loopback() {
                AddressClass::Loopback
            } else if first & 0xfe00 == 0xfc00 {
                AddressClass::Private
            } else if v6.is_unspecified() || v6.is_multicast() || first & 0xffc0 == 0xfe80 {
                AddressClass::Blocked
            } else {
                AddressClass::Public
            }
        }
    }
}

/// The addresses OAuth requests for one MCP server may reach: public ones, and loopback
/// or private ones only when the server's own URL names such an address (or
/// `localhost`). This is the policy rmcp applies inside `AuthorizationManager::new`,
/// whose resolver rmcp keeps private, so a manager given this module's client gets it
/// here. Proxies named in the environment are not filtered (they resolve the target).
#[derive(Clone, Debug)]
pub(crate) struct AddressPolicy {
    allowed: Vec<AddressClass>,
    proxies: Vec<String>,
}

impl AddressPolicy {
    pub(crate) fn for_resource(resource: &str) -> Self {
        let mut allowed = vec![AddressClass::Public];
        let own = reqwest::Url::parse(resource)
            .ok()
            .and_then(|u| match u.host() {
                Some(url::Host::Ipv4(v4)) => Some(address_class(IpAddr::V4(v4))),
                Some(url::Host::Ipv6(v6)) => Some(address_class(IpAddr::V6(v6))),
                Some(url::Host::Domain(d)) if d.eq_ignore_ascii_case("localhost") => {
                    Some(AddressClass::Loopback)
                }
                _ => None,
            });
        if let Some(class @ (AddressClass::Loopback | AddressClass::Private)) = own {
            allowed.push(class);
        }
        let proxies = [
            "HTTP_PROXY",
            "http_proxy",
            "HTTPS_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
        ]
        .iter()
        .filter_map(|var| std::env::var(var).ok())
        .filter_map(|p| {
            let p = if p.contains("://") {
                p
            } else {
                format!("http://{p}")
            };
            reqwest::Url::parse(&p)
                .ok()?
                .host_str()
                .map(str::to_ascii_lowercase)
        })
        .collect();
        AddressPolicy { allowed, proxies }
    }

    fn allows(&self, ip: IpAddr) -> bool {
        self.allowed.contains(&address_class(ip))
    }

    /// An IP-literal URL (reqwest connects to it without resolving).
    pub(crate) fn allows_url(&self, url: &reqwest::Url) -> bool {
        match url.host() {
            Some(url::Host::Ipv4(v4)) => self.allows(IpAddr::V4(v4)),
            Some(url::Host::Ipv6(v6)) => self.allows(IpAddr::V6(v6)),
            _ => true,
        }
    }
}

impl reqwest::dns::Resolve for AddressPolicy {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.clone();
        Box::pin(async move {
            let host = name.as_str().trim_end_matches('.').to_ascii_lowercase();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if policy.proxies.contains(&host) {
                return Ok(Box::new(found.into_iter()) as reqwest::dns::Addrs);
            }
            let kept: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| policy.allows(a.ip()))
                .collect();
            if kept.is_empty() {
                return Err(format!(
                    "no address of {host} may be reached for this server's authorization"
                )
                .into());
            }
            Ok(Box::new(kept.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// A client for OAuth requests about `resource`'s server: addresses filtered by
/// [`AddressPolicy`], `redirect` as given, a `timeout` per request.
pub(crate) fn filtered_client(
    resource: &str,
    redirect: reqwest::redirect::Policy,
    timeout: Duration,
) -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .timeout(timeout)
        .redirect(redirect)
        .dns_resolver(Arc::new(AddressPolicy::for_resource(resource)))
        .build()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_classed_as_rmcp_classes_them() {
        let class = |s: &str| address_class(s.parse().unwrap());
        assert_eq!(class("8.8.8.8"), AddressClass::Public);
        assert_eq!(class("127.0.0.1"), AddressClass::Loopback);
        assert_eq!(class("::1"), AddressClass::Loopback);
        assert_eq!(class("10.0.0.9"), AddressClass::Private);
        assert_eq!(class("100.64.0.1"), AddressClass::Private);
        assert_eq!(class("fd00::1"), AddressClass::Private);
        assert_eq!(class("169.254.169.254"), AddressClass::Blocked);
        assert_eq!(class("::ffff:169.254.169.254"), AddressClass::Blocked);
        assert_eq!(class("fe80::1"), AddressClass::Blocked);
        assert_eq!(class("0.0.0.0"), AddressClass::Blocked);
        assert_eq!(class("224.0.0.1"), AddressClass::Blocked);
    }

    #[test]
    fn loopback_and_private_addresses_only_for_a_server_on_one() {
        let public = AddressPolicy::for_resource("https://mcp.example.com/mcp");
        assert!(public.allows("8.8.8.8".parse().unwrap()));
        assert!(!public.allows("127.0.0.1".parse().unwrap()));
        assert!(!public.allows("10.1.2.3".parse().unwrap()));
        let local = AddressPolicy::for_resource("http://localhost:3000/mcp");
        assert!(local.allows("127.0.0.1".parse().unwrap()));
        assert!(!local.allows("10.1.2.3".parse().unwrap()));
        assert!(!local.allows("169.254.169.254".parse().unwrap()));
        let private = AddressPolicy::for_resource("http://10.0.0.5/mcp");
        assert!(private.allows("10.1.2.3".parse().unwrap()));
        assert!(!private.allows("127.0.0.1".parse().unwrap()));
        assert!(!public.allows_url(&"http://169.254.169.254/token".parse().unwrap()));
    }
}
