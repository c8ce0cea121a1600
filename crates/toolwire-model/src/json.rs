//! A compact JSON writer for request bodies: the bytes `serde_json::to_vec` writes, faster.
//!
//! serde_json escapes a string one byte at a time through a table, and that loop was a third
//! of encoding a long session (the texts are most of the body). This serializer finds the
//! next byte to escape eight bytes at a time and copies every clean run whole; everything
//! else (numbers, map keys that are not strings) is written by serde_json itself, so the
//! output is byte for byte serde_json's compact form (tests below and tests/bytes.rs).

use serde::ser::{self, Serialize};
use serde_json::Error;

/// `value` as compact JSON, exactly as `serde_json::to_vec` writes it, into a buffer of
/// `capacity` bytes to start with (an estimate of the body, so it is rarely grown).
pub(crate) fn to_vec<T: Serialize + ?Sized>(value: &T, capacity: usize) -> Result<Vec<u8>, Error> {
    let mut writer = Writer {
        out: Vec::with_capacity(capacity),
    };
    value.serialize(&mut writer)?;
    Ok(writer.out)
}

struct Writer {
    out: Vec<u8>,
}

/// A byte repeated in every lane of a word.
const fn lanes(byte: u8) -> u64 {
    0x0101_0101_0101_0101 * byte as u64
}

/// The lanes of `word` holding a byte below 0x20, `"` or `\`, as their high bits. The
/// lowest flagged lane is always a true one: a lane only borrows from the one below it
/// when that lane is itself a hit, so false flags can only sit above a true one.
fn escape_lanes(word: u64) -> u64 {
    const HIGH: u64 = lanes(0x80);
    let control = word.wrapping_sub(lanes(0x20)) & !word;
    let quote = word ^ lanes(b'"');
    let quote = quote.wrapping_sub(lanes(1)) & !quote;
    let backslash = word ^ lanes(b'\\');
    let backslash = backslash.wrapping_sub(lanes(1)) & !backslash;
    (control | quote | backslash) & HIGH
}

fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// The two-character escape of each byte that has one (`n` for a newline), else 0.
const SHORT_ESCAPES: [u8; 256] = {
    let mut table = [0u8; 256];
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[b'\n' as usize] = b'n';
    table[b'\r' as usize] = b'r';
    table[b'\t' as usize] = b't';
    table[0x08] = b'b';
    table[0x0c] = b'f';
    table
};

/// Writes one byte JSON must escape, as serde_json writes it. Inlined with a table for
/// the two-character forms: a log's newlines make this as frequent as every few words.
#[inline]
fn write_escape(out: &mut Vec<u8>, byte: u8) {
    match SHORT_ESCAPES[usize::from(byte)] {
        0 => write_unicode_escape(out, byte),
        short => out.extend_from_slice(&[b'\\', short]),
    }
}

/// `\u00xx` (lower-case hex), for the control characters without a two-character form.
#[cold]
fn write_unicode_escape(out: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(&[
        b'\\',
        b'u',
        b'0',
        b'0',
        HEX[usize::from(byte >> 4)],
        HEX[usize::from(byte & 0xf)],
    ]);
}

/// How far ahead of the escaper [`warm`] loads a text: a long session's results are each
/// ~1 KB of their own, scattered in the heap, so a block covers most texts whole.
const WARM_BLOCK: usize = 2048;

/// Loads one byte of every cache line of `bytes`' first [`WARM_BLOCK`] bytes. The loads
/// depend on nothing, so the CPU has them all in flight at once; the escaper's own loads
/// come a word at a time, each after the last was checked, and in a session larger than
/// the cache each waited for memory in turn (`perf` put a third of encoding a 2,000-turn
/// session on that one load). A software prefetch, without `unsafe`.
#[inline]
fn warm(bytes: &[u8]) {
    let block = bytes.get(..WARM_BLOCK).unwrap_or(bytes);
    let mut acc = 0u8;
    for &byte in block.iter().step_by(64) {
        acc ^= byte;
    }
    std::hint::black_box(acc);
}

/// Writes `text` as a JSON string, escaped as serde_json escapes it: the two-character
/// forms for `"`, `\`, backspace, form feed, newline, carriage return and tab, `\u00xx`
/// (lower-case hex) for the other control characters, everything else as it is.
///
/// Eight bytes at a time: each word is copied whole (one store, no call), and when it holds
/// a byte to escape the copy is cut back to just before that byte, which is written
/// escaped, and the next word starts right after it.
fn write_str(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut i = 0;
    // The text is read a block at a time, each block brought into cache as a whole first.
    let mut block_end = 0;
    while let Some(chunk) = bytes.get(i..i + 8) {
        if i >= block_end {
            block_end = i + WARM_BLOCK;
            warm(bytes.get(i..).unwrap_or_default());
        }
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        out.extend_from_slice(&word);
        let hits = escape_lanes(u64::from_le_bytes(word));
        if hits == 0 {
            i += 8;
            continue;
        }
        let at = (hits.trailing_zeros() / 8) as usize;
        out.truncate(out.len() - (8 - at));
        write_escape(out, word[at]);
        i += at + 1;
    }
    for &byte in bytes.get(i..).unwrap_or_default() {
        if needs_escape(byte) {
            write_escape(out, byte);
        } else {
            out.push(byte);
        }
    }
    out.push(b'"');
}

impl Writer {
    /// A scalar as serde_json writes it (numbers through its own itoa and ryu).
    fn scalar<T: Serialize>(&mut self, value: T) -> Result<(), Error> {
        serde_json::to_writer(&mut self.out, &value)
    }
}

/// An array or object being written: whether a `,` goes before the next element.
pub(crate) struct Compound<'a> {
    writer: &'a mut Writer,
    first: bool,
    /// What closes it: `]`, `}`, or `]}` / `}}` for a variant wrapped in an object.
    close: &'static [u8],
}

impl Compound<'_> {
    fn comma(&mut self) {
        if !self.first {
            self.writer.out.push(b',');
        }
        self.first = false;
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        self.comma();
        write_str(&mut self.writer.out, key);
        self.writer.out.push(b':');
        value.serialize(&mut *self.writer)
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.comma();
        value.serialize(&mut *self.writer)
    }

    fn close(self) {
        self.writer.out.extend_from_slice(self.close);
    }
}

impl Writer {
    fn open(&mut self, open: &[u8], close: &'static [u8]) -> Compound<'_> {
        self.out.extend_from_slice(open);
        Compound {
            writer: self,
            first: true,
            close,
        }
    }

    /// `{"variant":` before a variant's content.
    fn variant_key(&mut self, variant: &str) {
        self.out.push(b'{');
        write_str(&mut self.out, variant);
        self.out.push(b':');
    }
}

impl<'a> ser::Serializer for &'a mut Writer {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        write_str(&mut self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        write_str(&mut self.out, v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_none()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.variant_key(variant);
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(self.open(b"[", b"]"))
    }
    fn serialize_tuple(self, _len: usize) -> Result<Compound<'a>, Error> {
        Ok(self.open(b"[", b"]"))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        Ok(self.open(b"[", b"]"))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.variant_key(variant);
        Ok(self.open(b"[", b"]}"))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(self.open(b"{", b"}"))
    }
    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Compound<'a>, Error> {
        if name.starts_with("$serde_json::private::") {
            // serde_json's own number or raw value (features this workspace does not
            // enable): not guessed at here.
            return Err(ser::Error::custom(format!("cannot write {name}")));
        }
        Ok(self.open(b"{", b"}"))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.variant_key(variant);
        Ok(self.open(b"{", b"}}"))
    }
}

/// The four sequence-like compounds serde names apart write alike: elements, commas,
/// the closing bracket.
macro_rules! elements {
    ($($trait:ident :: $method:ident),*) => {$(
        impl ser::$trait for Compound<'_> {
            type Ok = ();
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.element(value)
            }
            fn end(self) -> Result<(), Error> {
                self.close();
                Ok(())
            }
        }
    )*};
}
elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.comma();
        key.serialize(MapKey {
            out: &mut self.writer.out,
        })?;
        self.writer.out.push(b':');
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut *self.writer)
    }
    fn end(self) -> Result<(), Error> {
        self.close();
        Ok(())
    }
}

/// A struct and a struct variant write alike: named fields, the closing brace(s).
macro_rules! fields {
    ($($trait:ident),*) => {$(
        impl ser::$trait for Compound<'_> {
            type Ok = ();
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), Error> {
                self.field(key, value)
            }
            fn end(self) -> Result<(), Error> {
                self.close();
                Ok(())
            }
        }
    )*};
}
fields!(SerializeStruct, SerializeStructVariant);

/// A map key: a string, or what serde_json writes as one (a number, a bool or a char, in
/// quotes); anything else is the error serde_json gives.
struct MapKey<'a> {
    out: &'a mut Vec<u8>,
}

impl MapKey<'_> {
    fn quoted<T: Serialize>(self, value: T) -> Result<(), Error> {
        self.out.push(b'"');
        serde_json::to_writer(&mut *self.out, &value)?;
        self.out.push(b'"');
        Ok(())
    }
}

fn key_must_be_a_string() -> Error {
    ser::Error::custom("key must be a string")
}

impl ser::Serializer for MapKey<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        write_str(self.out, v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_f32(self, _v: f32) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_f64(self, _v: f64) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_none(self) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_must_be_a_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn same(value: &serde_json::Value) {
        let ours = to_vec(value, 0).unwrap_or_default();
        let theirs = serde_json::to_vec(value).unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs)
        );
    }

    #[test]
    fn every_ascii_byte_is_escaped_as_serde_json_escapes_it() {
        for byte in 0u8..=127 {
            let c = char::from(byte);
            for text in [
                c.to_string(),
                format!("abcdefg{c}"),
                format!("abcdefgh{c}xyz"),
                format!("{c}{c}é{c}12345678901234567890{c}"),
            ] {
                same(&json!(text));
            }
        }
    }

    #[test]
    fn trees_and_scalars_match_serde_json() {
        same(&json!({
            "a": [1, -2, 3.5, 1e300, null, true, false, "x\u{7f}\u{1f}ü😀"],
            "": {}, "e": [], "n": {"m": [[], [{}]]}, "f": 0.1, "i": i64::MIN, "u": u64::MAX
        }));
        #[derive(serde::Serialize)]
        enum E {
            Unit,
            New(u8),
            Tuple(u8, char),
            Struct { a: Option<u8>, b: &'static [u8] },
        }
        let values = (
            E::Unit,
            E::New(1),
            E::Tuple(2, '"'),
            E::Struct { a: None, b: b"hi" },
        );
        let ours = to_vec(&values, 0).unwrap_or_default();
        assert_eq!(ours, serde_json::to_vec(&values).unwrap_or_default());
        let map: std::collections::BTreeMap<i32, bool> = [(-1, true), (2, false)].into();
        assert_eq!(
            to_vec(&map, 0).unwrap_or_default(),
            serde_json::to_vec(&map).unwrap_or_default()
        );
        let bad: std::collections::BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into();
        assert!(to_vec(&bad, 0).is_err());
    }

    proptest! {
        #[test]
        fn any_string_matches_serde_json(text in any::<String>(), noise in "[\"\\\\\n\t\u{0}-\u{1f}a-z]{0,40}") {
            same(&json!(text));
            same(&json!(format!("{noise}{text}{noise}")));
        }
    }
}
