//! A compact YAML document model, built from saphyr-parser's events.
//!
//! TOOL.md frontmatter is small and read by the thousand at start-up, so this keeps only
//! what validation needs: each node's start position, scalars resolved by YAML 1.2's core
//! schema, and mappings as ordered pairs (no hashing). Building it is iterative, so no
//! input can exhaust the stack; nesting depth and node count are bounded.

use saphyr::Scalar;
use saphyr_parser::{Event, Marker, Parser, ScalarStyle, Span, SpannedEventReceiver};

/// Deeper nesting than this is refused: no real TOOL.md nests like that.
pub(crate) const MAX_DEPTH: usize = 64;
/// More nodes than this (aliases count their whole copy) is refused: it bounds memory.
pub(crate) const MAX_NODES: usize = 100_000;

#[derive(Debug, Clone)]
pub(crate) struct Node<'a> {
    pub(crate) start: Marker,
    /// For a scalar whose value stands in the source character for character on one line
    /// (no escapes, no folding): the 0-based column of its first character, so a finding
    /// about a part of the value can point at that part.
    pub(crate) verbatim_col: Option<usize>,
    pub(crate) data: Data<'a>,
}

#[derive(Debug, Clone)]
pub(crate) enum Data<'a> {
    Scalar(Scalar<'a>),
    Seq(Vec<Node<'a>>),
    Map(Vec<(Node<'a>, Node<'a>)>),
}

impl<'a> Node<'a> {
    pub(crate) fn as_str(&self) -> Option<&str> {
        match &self.data {
            Data::Scalar(Scalar::String(s)) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(self.data, Data::Scalar(Scalar::Null))
    }

    fn size(&self) -> usize {
        match &self.data {
            Data::Scalar(_) => 1,
            Data::Seq(items) => 1 + items.iter().map(Node::size).sum::<usize>(),
            Data::Map(pairs) => {
                1 + pairs
                    .iter()
                    .map(|(k, v)| k.size() + v.size())
                    .sum::<usize>()
            }
        }
    }
}

#[derive(Debug)]
pub(crate) struct YamlError {
    pub(crate) at: Marker,
    pub(crate) message: String,
}

/// Loads the first document of `text`; `Ok(None)` when there is none (empty frontmatter).
pub(crate) fn load(text: &str) -> Result<Option<Node<'_>>, YamlError> {
    // Pull events one by one: `Parser::load` recurses per nesting level, the iterator does not.
    let mut builder = Builder::default();
    for event in Parser::new_from_str(text) {
        match event {
            Ok((event, span)) => builder.on_event(event, span),
            Err(e) => {
                return Err(YamlError {
                    at: *e.marker(),
                    message: e.info().to_string(),
                });
            }
        }
        if let Some(e) = builder.error.take() {
            return Err(e);
        }
    }
    Ok(builder.root)
}

enum Frame<'a> {
    Seq {
        node: Node<'a>,
        anchor: usize,
    },
    Map {
        node: Node<'a>,
        anchor: usize,
        key: Option<Node<'a>>,
    },
}

#[derive(Default)]
struct Builder<'a> {
    stack: Vec<Frame<'a>>,
    root: Option<Node<'a>>,
    anchors: Vec<(usize, Node<'a>)>,
    nodes: usize,
    error: Option<YamlError>,
}

impl<'a> Builder<'a> {
    fn fail(&mut self, at: Marker, message: String) {
        if self.error.is_none() {
            self.error = Some(YamlError { at, message });
        }
    }

    fn count(&mut self, n: usize, at: Marker) -> bool {
        self.nodes += n;
        if self.nodes > MAX_NODES {
            self.fail(
                at,
                format!("the frontmatter has more than {MAX_NODES} nodes"),
            );
            return false;
        }
        true
    }

    fn open(&mut self, frame: Frame<'a>, at: Marker) {
        if self.stack.len() >= MAX_DEPTH {
            self.fail(
                at,
                format!("the frontmatter nests deeper than {MAX_DEPTH} levels"),
            );
            return;
        }
        if self.count(1, at) {
            self.stack.push(frame);
        }
    }

    /// Attaches a finished node to its parent (or makes it the document root).
    fn attach(&mut self, node: Node<'a>, anchor: usize) {
        if anchor != 0 {
            self.anchors.push((anchor, node.clone()));
        }
        match self.stack.last_mut() {
            None => {
                if self.root.is_none() {
                    self.root = Some(node);
                }
            }
            Some(Frame::Seq { node: seq, .. }) => {
                if let Data::Seq(items) = &mut seq.data {
                    items.push(node);
                }
            }
            Some(Frame::Map { node: map, key, .. }) => match key.take() {
                None => *key = Some(node),
                Some(k) => {
                    if let Data::Map(pairs) = &mut map.data {
                        if let Data::Scalar(key) = &k.data
                            && pairs.iter().any(
                                |(other, _)| matches!(&other.data, Data::Scalar(o) if o == key),
                            )
                        {
                            let at = k.start;
                            let text = key_text(key);
                            self.fail(at, format!("duplicate key `{text}`"));
                            return;
                        }
                        pairs.push((k, node));
                    }
                }
            },
        }
    }
}

fn key_text(key: &Scalar<'_>) -> String {
    match key {
        Scalar::String(s) => s.to_string(),
        Scalar::Integer(i) => i.to_string(),
        Scalar::FloatingPoint(f) => f.to_string(),
        Scalar::Boolean(b) => b.to_string(),
        Scalar::Null => "null".into(),
    }
}

impl<'a> SpannedEventReceiver<'a> for Builder<'a> {
    fn on_event(&mut self, ev: Event<'a>, span: Span) {
        if self.error.is_some() {
            return;
        }
        let at = span.start;
        match ev {
            Event::Scalar(text, style, anchor, tag) => {
                if self.count(1, at) {
                    let verbatim = verbatim_col(&text, style, span);
                    let scalar = match (&tag, style) {
                        (None, ScalarStyle::Plain) => Scalar::parse_from_cow(text),
                        (None, _) => Scalar::String(text),
                        (Some(_), _) => {
                            Scalar::parse_from_cow_and_metadata(text.clone(), style, tag.as_ref())
                                .unwrap_or(Scalar::String(text))
                        }
                    };
                    self.attach(
                        Node {
                            start: at,
                            verbatim_col: verbatim,
                            data: Data::Scalar(scalar),
                        },
                        anchor,
                    );
                }
            }
            Event::SequenceStart(anchor, _) => {
                self.open(
                    Frame::Seq {
                        node: Node {
                            start: at,
                            verbatim_col: None,
                            data: Data::Seq(Vec::new()),
                        },
                        anchor,
                    },
                    at,
                );
            }
            Event::MappingStart(anchor, _) => {
                self.open(
                    Frame::Map {
                        node: Node {
                            start: at,
                            verbatim_col: None,
                            data: Data::Map(Vec::new()),
                        },
                        anchor,
                        key: None,
                    },
                    at,
                );
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some(frame) = self.stack.pop() {
                    let (node, anchor) = match frame {
                        Frame::Seq { node, anchor } | Frame::Map { node, anchor, .. } => {
                            (node, anchor)
                        }
                    };
                    self.attach(node, anchor);
                }
            }
            Event::Alias(id) => {
                let found = self
                    .anchors
                    .iter()
                    .rev()
                    .find(|(a, _)| *a == id)
                    .map(|(_, n)| n.clone());
                match found {
                    Some(mut node) => {
                        if self.count(node.size(), at) {
                            node.start = at;
                            node.verbatim_col = None;
                            self.attach(node, 0);
                        }
                    }
                    None => self.fail(at, "alias to an unknown anchor".into()),
                }
            }
            Event::Nothing
            | Event::StreamStart
            | Event::StreamEnd
            | Event::DocumentStart(_)
            | Event::DocumentEnd => {}
        }
    }
}

/// See [`Node::verbatim_col`]. Every escape (`''`, `\n`, `\x41`), every fold, and a tag or
/// anchor in the span makes the spelling longer than the value, so equal lengths on one
/// line mean a verbatim copy.
fn verbatim_col(text: &str, style: ScalarStyle, span: Span) -> Option<usize> {
    let quotes = match style {
        ScalarStyle::Plain => 0,
        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => 1,
        ScalarStyle::Literal | ScalarStyle::Folded => return None,
    };
    let spelled = span.end.index().checked_sub(span.start.index())?;
    (span.start.line() == span.end.line() && spelled == text.chars().count() + 2 * quotes)
        .then_some(span.start.col() + quotes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_ordered_maps_with_positions() {
        let doc = load("b: 1\na:\n  - x\n  - 2.5\nc: ~\n").unwrap().unwrap();
        let Data::Map(pairs) = &doc.data else {
            panic!("not a map")
        };
        let keys: Vec<_> = pairs.iter().map(|(k, _)| k.as_str().unwrap()).collect();
        assert_eq!(keys, ["b", "a", "c"]);
        assert_eq!((pairs[1].0.start.line(), pairs[1].0.start.col()), (2, 0));
        assert!(matches!(pairs[0].1.data, Data::Scalar(Scalar::Integer(1))));
        assert!(pairs[2].1.is_null());
        let Data::Seq(items) = &pairs[1].1.data else {
            panic!("not a seq")
        };
        assert_eq!(items[0].as_str(), Some("x"));
        assert_eq!(items[1].start.line(), 4);
    }

    #[test]
    fn scalars_written_verbatim_on_one_line_know_their_column() {
        let doc = load(concat!(
            "a: x, y\n",
            "b:   'x, y'\n",
            "c: \"x, y\"\n",
            "d: 'it''s'\n",
            "e: \"\\x41\"\n",
            "f: x\n   y\n",
            "g: |\n  x\n",
            "h: !!str x\n",
            "i: &v é, y\n",
            "j: *v\n",
            "k: é, ü\n",
        ))
        .unwrap()
        .unwrap();
        let Data::Map(pairs) = &doc.data else {
            panic!("not a map")
        };
        let cols: Vec<_> = pairs.iter().map(|(_, v)| v.verbatim_col).collect();
        assert_eq!(
            cols,
            [
                Some(3),
                Some(6),
                Some(4),
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                Some(3)
            ]
        );
    }

    #[test]
    fn quoted_scalars_stay_strings() {
        let doc = load("a: \"1\"\nb: 'true'\n").unwrap().unwrap();
        let Data::Map(pairs) = &doc.data else {
            panic!()
        };
        assert_eq!(pairs[0].1.as_str(), Some("1"));
        assert_eq!(pairs[1].1.as_str(), Some("true"));
    }

    #[test]
    fn duplicate_keys_and_limits_are_errors() {
        let e = load("a: 1\nb: 2\na: 3\n").unwrap_err();
        assert_eq!((e.at.line(), e.message.as_str()), (3, "duplicate key `a`"));
        let deep = format!("{}x", "- ".repeat(MAX_DEPTH + 1));
        assert!(load(&deep).unwrap_err().message.contains("nests deeper"));
        // A billion laughs stops at the node budget instead of eating memory.
        let mut laughs = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 0..8 {
            laughs += &format!(
                "b{i}: &b{i} [{}]\n",
                vec![
                    if i == 0 {
                        "*a".to_string()
                    } else {
                        format!("*b{}", i - 1)
                    };
                    10
                ]
                .join(", ")
            );
        }
        assert!(load(&laughs).unwrap_err().message.contains("nodes"));
    }

    #[test]
    fn aliases_copy_their_anchor() {
        let doc = load("a: &x hello\nb: *x\n").unwrap().unwrap();
        let Data::Map(pairs) = &doc.data else {
            panic!()
        };
        assert_eq!(pairs[1].1.as_str(), Some("hello"));
        assert_eq!(pairs[1].1.start.line(), 2);
    }

    #[test]
    fn empty_text_has_no_document() {
        assert!(load("").unwrap().is_none());
        assert!(load("# only a comment\n").unwrap().is_none());
    }
}
