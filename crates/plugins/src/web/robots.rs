//! robots.txt (RFC 9309): the group for our user agent (else `*`), longest matching rule
//! wins, `Allow` wins ties; `*` matches any run of characters and `$` anchors the end.

/// `(allow, pattern)`.
type Rule = (bool, String);

#[derive(Debug, Clone, Default)]
pub(crate) struct Robots {
    /// The rules of the group that applies to us.
    rules: Vec<Rule>,
}

impl Robots {
    /// Everything allowed (no robots.txt, or a 4xx for it).
    pub(crate) fn allow_all() -> Robots {
        Robots::default()
    }

    /// Everything disallowed (robots.txt unreachable: RFC 9309 says assume the worst).
    pub(crate) fn disallow_all() -> Robots {
        Robots {
            rules: vec![(false, "/".into())],
        }
    }

    /// `agent` is our product token, e.g. "Toolhost".
    pub(crate) fn parse(text: &str, agent: &str) -> Robots {
        let agent = agent.to_ascii_lowercase();
        let mut groups: Vec<(Vec<String>, Vec<Rule>)> = Vec::new();
        let mut in_agents = false;
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let (key, value) = (key.trim().to_ascii_lowercase(), value.trim());
            match key.as_str() {
                "user-agent" => {
                    if !in_agents {
                        groups.push((Vec::new(), Vec::new()));
                    }
                    in_agents = true;
                    if let Some(g) = groups.last_mut() {
                        g.0.push(value.to_ascii_lowercase());
                    }
                }
                "allow" | "disallow" => {
                    in_agents = false;
                    if let Some(g) = groups.last_mut()
                        && !value.is_empty()
                    {
                        g.1.push((key == "allow", value.to_string()));
                    }
                }
                _ => {}
            }
        }
        let ours = |agents: &Vec<String>| {
            agents
                .iter()
                .any(|a| a != "*" && agent.contains(a.as_str()))
        };
        let star = |agents: &Vec<String>| agents.iter().any(|a| a == "*");
        let applies: &dyn Fn(&Vec<String>) -> bool = if groups.iter().any(|(a, _)| ours(a)) {
            &ours
        } else {
            &star
        };
        let rules = groups
            .iter()
            .filter(|(agents, _)| applies(agents))
            .flat_map(|(_, rules)| rules.iter().cloned())
            .collect();
        Robots { rules }
    }

    /// Whether `path` (path and query) may be fetched.
    pub(crate) fn allows(&self, path: &str) -> bool {
        let mut best: Option<(usize, bool)> = None;
        for (allow, pattern) in &self.rules {
            if matches(pattern, path) {
                let len = pattern.len();
                best = match best {
                    Some((l, a)) if l > len || (l == len && a) => Some((l, a)),
                    _ => Some((len, *allow)),
                };
            }
        }
        best.is_none_or(|(_, allow)| allow)
    }
}

/// Does `pattern` (with `*` and a trailing `$`) match a prefix of `path` (or all of it)?
fn matches(pattern: &str, path: &str) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    let parts: Vec<&str> = pattern.split('*').collect();
    let mut at = 0;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            if !path.starts_with(part) {
                return false;
            }
            at = part.len();
            continue;
        }
        let last = i == parts.len() - 1;
        if last && anchored {
            return path.len() >= at + part.len() && path.ends_with(part);
        }
        match path[at..].find(part) {
            Some(found) => at += found + part.len(),
            None => return false,
        }
    }
    !anchored || at == path.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_our_group_and_the_longest_rule() {
        let text = "User-agent: *\nDisallow: /private\nAllow: /private/ok\n\nUser-agent: OtherBot\nDisallow: /\n";
        let r = Robots::parse(text, "Toolhost");
        assert!(r.allows("/"));
        assert!(!r.allows("/private/x"));
        assert!(r.allows("/private/ok/page"));
        let ours = "User-agent: toolhost\nDisallow: /no\n\nUser-agent: *\nDisallow: /\n";
        let r = Robots::parse(ours, "Toolhost/0.1");
        assert!(r.allows("/yes") && !r.allows("/no/x"));
        let r = Robots::parse(
            "User-agent: *\nDisallow: /*.pdf$\nDisallow: /a*b\n",
            "Toolhost",
        );
        assert!(!r.allows("/docs/x.pdf") && r.allows("/docs/x.pdf?y"));
        assert!(!r.allows("/a/zzz/b") && r.allows("/a/zzz"));
        assert!(Robots::parse("", "Toolhost").allows("/anything"));
        assert!(!Robots::disallow_all().allows("/"));
    }
}
