//! A Rust value made into JavaScript values directly, through Node-API, as JSON.parse would
//! make them of the value's serde_json text: for values holding large strings, where the
//! text way copies each string three times (into the JSON text, into a V8 string of it,
//! out of it by JSON.parse) and this way once (into its V8 string).
//!
//! Object keys are defined (`napi_define_properties`, as JSON.parse's CreateDataProperty),
//! never assigned: an assignment of a `__proto__` key from a tool's output would set the
//! object's prototype instead of making a property.

use napi::bindgen_prelude::*;
use napi::{Property, PropertyAttributes};
use serde::Serialize;
use serde::ser::{self, Impossible};

/// `value` as the JavaScript value JSON.parse makes of `serde_json::to_string(value)`.
pub(crate) fn to_js<'env, T: Serialize + ?Sized>(
    env: &'env Env,
    value: &T,
) -> Result<Unknown<'env>> {
    value.serialize(JsSer(env))
}

/// Numbers as serde_json writes them and JSON.parse reads them back: every integer as the
/// nearest double, a non-finite float as null.
fn number(env: &Env, n: f64) -> Result<Unknown<'_>> {
    if n.is_finite() {
        n.into_unknown(env)
    } else {
        Null.into_unknown(env)
    }
}

#[derive(Clone, Copy)]
struct JsSer<'env>(&'env Env);

impl<'env> ser::Serializer for JsSer<'env> {
    type Ok = Unknown<'env>;
    type Error = Error;
    type SerializeSeq = Seq<'env>;
    type SerializeTuple = Seq<'env>;
    type SerializeTupleStruct = Seq<'env>;
    type SerializeTupleVariant = Variant<Seq<'env>>;
    type SerializeMap = Map<'env>;
    type SerializeStruct = Map<'env>;
    type SerializeStructVariant = Variant<Map<'env>>;

    fn serialize_bool(self, v: bool) -> Result<Self::Ok> {
        v.into_unknown(self.0)
    }
    fn serialize_i8(self, v: i8) -> Result<Self::Ok> {
        number(self.0, f64::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<Self::Ok> {
        number(self.0, f64::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<Self::Ok> {
        number(self.0, f64::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<Self::Ok> {
        number(self.0, v as f64)
    }
    fn serialize_i128(self, v: i128) -> Result<Self::Ok> {
        number(self.0, v as f64)
    }
    fn serialize_u8(self, v: u8) -> Result<Self::Ok> {
        number(self.0, f64::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<Self::Ok> {
        number(self.0, f64::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<Self::Ok> {
        number(self.0, f64::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<Self::Ok> {
        number(self.0, v as f64)
    }
    fn serialize_u128(self, v: u128) -> Result<Self::Ok> {
        number(self.0, v as f64)
    }
    fn serialize_f32(self, v: f32) -> Result<Self::Ok> {
        // serde_json writes an f32 in its own shortest form ("0.1"), which JSON.parse
        // reads as the double nearest that text, not as the f32 widened.
        let text = v.to_string();
        number(self.0, text.parse().unwrap_or(f64::from(v)))
    }
    fn serialize_f64(self, v: f64) -> Result<Self::Ok> {
        number(self.0, v)
    }
    fn serialize_char(self, v: char) -> Result<Self::Ok> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<Self::Ok> {
        v.into_unknown(self.0)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Self::Ok> {
        // serde_json writes bytes as an array of numbers.
        let mut array = self.0.create_array(len_u32(v.len())?)?;
        for (i, b) in v.iter().enumerate() {
            array.set(len_u32(i)?, f64::from(*b))?;
        }
        array.into_unknown(self.0)
    }
    fn serialize_none(self) -> Result<Self::Ok> {
        Null.into_unknown(self.0)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Self::Ok> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Self::Ok> {
        Null.into_unknown(self.0)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Self::Ok> {
        Null.into_unknown(self.0)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Self::Ok> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Self::Ok> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Self::Ok> {
        let mut map = Map::new(self.0, 1);
        map.key = Some(self.serialize_str(variant)?);
        map.entry(value.serialize(self)?)?;
        map.done()
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq> {
        Ok(Seq {
            env: self.0,
            items: Vec::with_capacity(len.unwrap_or(0)),
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Ok(Variant {
            variant,
            inner: self.serialize_seq(Some(len))?,
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap> {
        Ok(Map::new(self.0, len.unwrap_or(0)))
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Self::SerializeStruct> {
        Ok(Map::new(self.0, len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Ok(Variant {
            variant,
            inner: Map::new(self.0, len),
        })
    }
}

fn len_u32(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::from_reason("an array too long for JavaScript"))
}

struct Seq<'env> {
    env: &'env Env,
    items: Vec<Unknown<'env>>,
}

impl<'env> Seq<'env> {
    fn done(self) -> Result<Unknown<'env>> {
        let mut array = self.env.create_array(len_u32(self.items.len())?)?;
        for (i, item) in self.items.into_iter().enumerate() {
            array.set(len_u32(i)?, item)?;
        }
        array.into_unknown(self.env)
    }
}

impl<'env> ser::SerializeSeq for Seq<'env> {
    type Ok = Unknown<'env>;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.items.push(value.serialize(JsSer(self.env))?);
        Ok(())
    }
    fn end(self) -> Result<Self::Ok> {
        self.done()
    }
}

impl<'env> ser::SerializeTuple for Seq<'env> {
    type Ok = Unknown<'env>;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Self::Ok> {
        self.done()
    }
}

impl<'env> ser::SerializeTupleStruct for Seq<'env> {
    type Ok = Unknown<'env>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Self::Ok> {
        self.done()
    }
}

/// An object's entries, defined on it all at once when it ends.
struct Map<'env> {
    env: &'env Env,
    properties: Vec<Property>,
    key: Option<Unknown<'env>>,
}

impl<'env> Map<'env> {
    fn new(env: &'env Env, len: usize) -> Self {
        Map {
            env,
            properties: Vec::with_capacity(len),
            key: None,
        }
    }

    fn entry(&mut self, value: Unknown<'env>) -> Result<()> {
        let key = self
            .key
            .take()
            .ok_or_else(|| Error::from_reason("a map value without its key"))?;
        self.properties.push(
            Property::new()
                .with_name(self.env, key)?
                .with_value(&value)
                .with_property_attributes(PropertyAttributes::default()),
        );
        Ok(())
    }

    fn done(self) -> Result<Unknown<'env>> {
        let mut object = Object::new(self.env)?;
        object.define_properties(&self.properties)?;
        object.into_unknown(self.env)
    }
}

impl<'env> ser::SerializeMap for Map<'env> {
    type Ok = Unknown<'env>;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.key = Some(key.serialize(KeySer(self.env))?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let value = value.serialize(JsSer(self.env))?;
        self.entry(value)
    }
    fn end(self) -> Result<Self::Ok> {
        self.done()
    }
}

impl<'env> ser::SerializeStruct for Map<'env> {
    type Ok = Unknown<'env>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.key = Some(key.into_unknown(self.env)?);
        let value = value.serialize(JsSer(self.env))?;
        self.entry(value)
    }
    fn end(self) -> Result<Self::Ok> {
        self.done()
    }
}

/// An enum variant with content, as serde_json writes it: `{"variant": content}`.
struct Variant<T> {
    variant: &'static str,
    inner: T,
}

impl<'env> Variant<Seq<'env>> {
    fn done(self) -> Result<Unknown<'env>> {
        let env = self.inner.env;
        let mut map = Map::new(env, 1);
        map.key = Some(self.variant.into_unknown(env)?);
        map.entry(self.inner.done()?)?;
        map.done()
    }
}

impl<'env> ser::SerializeTupleVariant for Variant<Seq<'env>> {
    type Ok = Unknown<'env>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(&mut self.inner, value)
    }
    fn end(self) -> Result<Self::Ok> {
        self.done()
    }
}

impl<'env> ser::SerializeStructVariant for Variant<Map<'env>> {
    type Ok = Unknown<'env>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        ser::SerializeStruct::serialize_field(&mut self.inner, key, value)
    }
    fn end(self) -> Result<Self::Ok> {
        let env = self.inner.env;
        let mut map = Map::new(env, 1);
        map.key = Some(self.variant.into_unknown(env)?);
        map.entry(self.inner.done()?)?;
        map.done()
    }
}

/// A map key as serde_json writes it: a string, or a number, bool or char as its text;
/// anything else is refused with serde_json's own words.
#[derive(Clone, Copy)]
struct KeySer<'env>(&'env Env);

impl<'env> KeySer<'env> {
    fn text(self, text: &str) -> Result<Unknown<'env>> {
        text.into_unknown(self.0)
    }
}

fn key_must_be_a_string() -> Error {
    Error::from_reason("key must be a string")
}

impl<'env> ser::Serializer for KeySer<'env> {
    type Ok = Unknown<'env>;
    type Error = Error;
    type SerializeSeq = Impossible<Unknown<'env>, Error>;
    type SerializeTuple = Impossible<Unknown<'env>, Error>;
    type SerializeTupleStruct = Impossible<Unknown<'env>, Error>;
    type SerializeTupleVariant = Impossible<Unknown<'env>, Error>;
    type SerializeMap = Impossible<Unknown<'env>, Error>;
    type SerializeStruct = Impossible<Unknown<'env>, Error>;
    type SerializeStructVariant = Impossible<Unknown<'env>, Error>;

    fn serialize_bool(self, v: bool) -> Result<Self::Ok> {
        self.text(if v { "true" } else { "false" })
    }
    fn serialize_i8(self, v: i8) -> Result<Self::Ok> {
        self.text(&v.to_string())
    }
    fn serialize_i16(self, v: i16) -> Result<Self::Ok> {
        self.text(&v.to_string())
    }
    fn serialize_i32(self, v: i32) -> Result<Self::Ok> {
        self.text(&v.to_string())
    }
    fn serialize_i64(self, v: i64) -> Result<Self::Ok> {
        self.text(&v.to_string())
    }
    fn serialize_i128(self, v: i128) -> Result<Self::Ok> {
        self.text(&v.to_string())
    }
    fn serialize_u8(self, v: u8) -> Result<Self::Ok> {
        self.text(&v.to_string())
    }
    fn serialize_u16(self, v: u16) -> Result<Self::Ok> {
        self.text(&v.to_string())
    }
    fn serialize_u32(self, v: u32) -> Result<Self::Ok> {
        self.text(&v.to_string())
    }
    fn serialize_u64(self, v: u64) -> Result<Self::Ok> {
        self.text(&v.to_string())
    }
    fn serialize_u128(self, v: u128) -> Result<Self::Ok> {
        self.text(&v.to_string())
    }
    fn serialize_f32(self, v: f32) -> Result<Self::Ok> {
        // serde_json's own float key text (ryu), from its own writer.
        self.text(&serde_json::to_string(&v).map_err(|e| Error::from_reason(e.to_string()))?)
    }
    fn serialize_f64(self, v: f64) -> Result<Self::Ok> {
        self.text(&serde_json::to_string(&v).map_err(|e| Error::from_reason(e.to_string()))?)
    }
    fn serialize_char(self, v: char) -> Result<Self::Ok> {
        self.text(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<Self::Ok> {
        self.text(v)
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<Self::Ok> {
        Err(key_must_be_a_string())
    }
    fn serialize_none(self) -> Result<Self::Ok> {
        Err(key_must_be_a_string())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<Self::Ok> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit(self) -> Result<Self::Ok> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Self::Ok> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Self::Ok> {
        self.text(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Self::Ok> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<Self::Ok> {
        Err(key_must_be_a_string())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(key_must_be_a_string())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(key_must_be_a_string())
    }
}
