//! The field reader behind the views: one JSON object's fields, typed, each problem
//! recorded with its path (formatted only when something is wrong).

use std::fmt::{self, Display};

use serde_json::{Map, Value as Json};

use super::SourceView;
use crate::source::is_blob_key;
use crate::violation::{Collector, Problem};

/// A path written only when a violation needs it: `prefix` then `suffix` (`output[2].`
/// then `data`). A value that checks out costs no string.
pub(crate) struct Joined<'p>(pub(crate) &'p dyn Display, pub(crate) &'static str);

impl Display for Joined<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)?;
        f.write_str(self.1)
    }
}

/// The path of item `i` of the array under `key`: `base.key[i]`, written when needed.
struct Item<'p> {
    base: &'p dyn Display,
    key: &'p str,
    i: usize,
}

impl Display for Item<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}[{}]", self.base, self.key, self.i)
    }
}

/// Reads the fields of one JSON object, recording each problem with its path. Paths are
/// formatted only when something is wrong, so valid data costs no allocation.
pub(super) struct Fields<'a, 'e> {
    map: &'a Map<String, Json>,
    pub(super) base: &'e dyn Display,
    pub(super) errs: &'e mut Collector,
}

impl<'a, 'e> Fields<'a, 'e> {
    pub(super) fn of(
        json: &'a Json,
        base: &'e dyn Display,
        errs: &'e mut Collector,
    ) -> Option<Self> {
        match json {
            Json::Object(map) => Some(Fields { map, base, errs }),
            _ => {
                errs.push(|| base.to_string(), Problem::WrongType("object"));
                None
            }
        }
    }

    pub(super) fn fail(&mut self, key: &str, problem: Problem) {
        let base = self.base;
        self.errs.push(|| format!("{base}.{key}"), problem);
    }

    /// A present field of the right type, `None` and a violation otherwise.
    pub(super) fn req<T>(
        &mut self,
        key: &str,
        expected: &'static str,
        get: impl FnOnce(&'a Json) -> Option<T>,
    ) -> Option<T> {
        match self.map.get(key) {
            None => {
                self.fail(key, Problem::Missing);
                None
            }
            Some(v) => {
                let got = get(v);
                if got.is_none() {
                    self.fail(key, Problem::WrongType(expected));
                }
                got
            }
        }
    }

    /// An absent or null field is `None`; a present one of the wrong type is a violation.
    pub(super) fn opt<T>(
        &mut self,
        key: &str,
        expected: &'static str,
        get: impl FnOnce(&'a Json) -> Option<T>,
    ) -> Option<T> {
        match self.map.get(key) {
            None | Some(Json::Null) => None,
            Some(v) => {
                let got = get(v);
                if got.is_none() {
                    self.fail(key, Problem::WrongType(expected));
                }
                got
            }
        }
    }

    pub(super) fn str(&mut self, key: &str) -> Option<&'a str> {
        self.req(key, "string", Json::as_str)
    }

    pub(super) fn opt_str(&mut self, key: &str) -> Option<&'a str> {
        self.opt(key, "string", Json::as_str)
    }

    pub(super) fn u64(&mut self, key: &str) -> Option<u64> {
        self.req(key, "non-negative integer", Json::as_u64)
    }

    pub(super) fn opt_u64(&mut self, key: &str) -> Option<u64> {
        self.opt(key, "non-negative integer", Json::as_u64)
    }

    pub(super) fn bool(&mut self, key: &str) -> Option<bool> {
        self.req(key, "boolean", Json::as_bool)
    }

    pub(super) fn opt_bool(&mut self, key: &str) -> Option<bool> {
        self.opt(key, "boolean", Json::as_bool)
    }

    pub(super) fn array(&mut self, key: &str) -> Option<&'a [Json]> {
        self.req(key, "array", |v| v.as_array().map(Vec::as_slice))
    }

    pub(super) fn opt_array(&mut self, key: &str) -> Option<&'a [Json]> {
        self.opt(key, "array", |v| v.as_array().map(Vec::as_slice))
    }

    pub(super) fn enumerated<T>(
        &mut self,
        key: &str,
        parse: fn(&str) -> Option<T>,
        names: &'static str,
    ) -> Option<T> {
        let s = self.str(key)?;
        self.named(key, s, parse, names)
    }

    pub(super) fn opt_enumerated<T>(
        &mut self,
        key: &str,
        parse: fn(&str) -> Option<T>,
        names: &'static str,
    ) -> Option<T> {
        let s = self.opt_str(key)?;
        self.named(key, s, parse, names)
    }

    pub(super) fn named<T>(
        &mut self,
        key: &str,
        s: &str,
        parse: fn(&str) -> Option<T>,
        names: &'static str,
    ) -> Option<T> {
        let parsed = parse(s);
        if parsed.is_none() {
            self.fail(
                key,
                Problem::UnknownValue {
                    found: s.to_owned(),
                    expected: names,
                },
            );
        }
        parsed
    }

    /// Strings of an array field; every non-string item is reported.
    pub(super) fn strings(&mut self, items: &'a [Json], key: &str) -> Option<Vec<&'a str>> {
        let mut out = Vec::with_capacity(items.len());
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            match item.as_str() {
                Some(s) => out.push(s),
                None => {
                    ok = false;
                    let base = self.base;
                    self.errs.push(
                        || format!("{base}.{key}[{i}]"),
                        Problem::WrongType("string"),
                    );
                }
            }
        }
        ok.then_some(out)
    }

    /// Parses each object of an array field with `item`; `None` if any item failed.
    pub(super) fn each<T>(
        &mut self,
        items: &'a [Json],
        key: &str,
        mut item: impl FnMut(&mut Fields<'a, '_>) -> Option<T>,
    ) -> Option<Vec<T>> {
        let mut out = Vec::with_capacity(items.len());
        let mut ok = true;
        for (i, json) in items.iter().enumerate() {
            let path = Item {
                base: self.base,
                key,
                i,
            };
            let parsed = Fields::of(json, &path, self.errs).and_then(|mut f| item(&mut f));
            match parsed {
                Some(v) => out.push(v),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    pub(super) fn source(&mut self, key: &str) -> Option<SourceView<'a>> {
        let Some(json) = self.map.get(key) else {
            self.fail(key, Problem::Missing);
            return None;
        };
        let Some(obj) = json.as_object() else {
            self.fail(key, Problem::InvalidSource);
            return None;
        };
        let str_of = |k: &str| obj.get(k).and_then(Json::as_str);
        let view = match (
            obj.len(),
            str_of("base64"),
            str_of("blob"),
            obj.get("size").and_then(Json::as_u64),
            str_of("url"),
        ) {
            (1, Some(b64), None, None, None) => Some(SourceView::Base64(b64)),
            (2, None, Some(key), Some(size), None) => Some(SourceView::Blob { key, size }),
            (1, None, None, None, Some(url)) => Some(SourceView::Url(url)),
            _ => None,
        };
        match view {
            None => self.fail(key, Problem::InvalidSource),
            Some(SourceView::Blob { key: blob, .. }) if !is_blob_key(blob) => {
                let base = self.base;
                self.errs.push(
                    || format!("{base}.{key}.blob"),
                    Problem::InvalidBlobKey(blob.to_owned()),
                );
                return None;
            }
            Some(_) => {}
        }
        view
    }
}
