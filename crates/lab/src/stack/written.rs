//! [`Written`]: an `[ssd.*]` section deserialized straight into its component's config, plus
//! the keys the file wrote. The rules across sections ask whether a key was given, not only
//! what value it has (`ssd.gc.policy = "greedy"` under the block mapping is an error although
//! `greedy` is the default; `multiplane = false` written next to superpages is refused, while a
//! default `false` is turned on).
//!
//! Serde tracks the keys: the section's map is read through a thin proxy that notes each key
//! name on its way to the config's own derived deserializer, so an unknown key or a bad value is
//! still serde's error at the key's full path (`ssd.gc.treshold_blocks`). Serialized, a section
//! holds the written keys only, so a point's JSON text reads back as the same section.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fmt;

/// A component config as a section gave it: every key not written keeps the config's default.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Written<T> {
    /// The component's config.
    pub config: T,
    /// The keys written.
    keys: BTreeSet<String>,
}

impl<T> Written<T> {
    /// Whether the section wrote `key`.
    pub fn has(&self, key: &str) -> bool {
        self.keys.contains(key)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Written<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let keys = RefCell::new(BTreeSet::new());
        let config = T::deserialize(Section {
            inner: deserializer,
            keys: &keys,
        })?;
        Ok(Written {
            config,
            keys: keys.into_inner(),
        })
    }
}

impl<T: Serialize> Serialize for Written<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let value = toml::Value::try_from(&self.config).map_err(serde::ser::Error::custom)?;
        let written: toml::Table = match value {
            toml::Value::Table(table) => table.into_iter().filter(|(k, _)| self.has(k)).collect(),
            _ => toml::Table::new(),
        };
        written.serialize(serializer)
    }
}

type Keys<'k> = &'k RefCell<BTreeSet<String>>;

/// The section's deserializer: hands the config's visitor a map whose keys are noted.
struct Section<'k, D> {
    inner: D,
    keys: Keys<'k>,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Section<'_, D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        let visitor = Entries {
            inner: visitor,
            keys: self.keys,
        };
        self.inner.deserialize_any(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = Entries {
            inner: visitor,
            keys: self.keys,
        };
        self.inner.deserialize_struct(name, fields, visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// The config's visitor, given the section's map with its keys noted (a visitor or map access
/// of the format underneath otherwise).
struct Entries<'k, V> {
    inner: V,
    keys: Keys<'k>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Entries<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(Entries {
            inner: map,
            keys: self.keys,
        })
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Entries<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.inner.next_key_seed(KeyName {
            inner: seed,
            keys: self.keys,
        })
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        self.inner.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// One key of the section: its seed, deserializer and visitor each pass the name through and
/// note it.
struct KeyName<'k, T> {
    inner: T,
    keys: Keys<'k>,
}

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for KeyName<'_, K> {
    type Value = K::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<K::Value, D::Error> {
        self.inner.deserialize(KeyName {
            inner: deserializer,
            keys: self.keys,
        })
    }
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for KeyName<'_, D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        let visitor = KeyName {
            inner: visitor,
            keys: self.keys,
        };
        self.inner.deserialize_any(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        let visitor = KeyName {
            inner: visitor,
            keys: self.keys,
        };
        self.inner.deserialize_identifier(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        ignored_any
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for KeyName<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<V::Value, E> {
        self.keys.borrow_mut().insert(name.to_string());
        self.inner.visit_str(name)
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, name: &'de str) -> Result<V::Value, E> {
        self.keys.borrow_mut().insert(name.to_string());
        self.inner.visit_borrowed_str(name)
    }

    fn visit_string<E: serde::de::Error>(self, name: String) -> Result<V::Value, E> {
        self.keys.borrow_mut().insert(name.clone());
        self.inner.visit_string(name)
    }

    fn visit_u64<E: serde::de::Error>(self, index: u64) -> Result<V::Value, E> {
        self.inner.visit_u64(index)
    }

    fn visit_bytes<E: serde::de::Error>(self, name: &[u8]) -> Result<V::Value, E> {
        self.inner.visit_bytes(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nandlab_ftl::{GcConfig, GcPolicy};

    #[test]
    fn a_section_keeps_its_config_and_the_keys_written() {
        let gc: Written<GcConfig> =
            toml::from_str("policy = \"greedy\"\ncopyback = false\n").unwrap();
        assert_eq!(gc.config.policy, GcPolicy::Greedy);
        assert!(!gc.config.copyback);
        assert!(gc.has("policy") && gc.has("copyback") && !gc.has("scope"));
        // a default value written counts as written
        assert_eq!(
            gc.config,
            GcConfig {
                copyback: false,
                ..GcConfig::default()
            }
        );
    }

    #[test]
    fn errors_name_the_key_inside_the_section() {
        let table: toml::Table = toml::from_str("[gc]\ntreshold_blocks = 4\n").unwrap();
        let err = serde_path_to_error::deserialize::<
            _,
            std::collections::BTreeMap<String, Written<GcConfig>>,
        >(toml::Value::Table(table))
        .unwrap_err();
        assert_eq!(err.path().to_string(), "gc.treshold_blocks");
        assert!(err.inner().to_string().contains("unknown field"), "{err}");
        let table: toml::Table = toml::from_str("[gc]\nthreshold_blocks = \"x\"\n").unwrap();
        let err = serde_path_to_error::deserialize::<
            _,
            std::collections::BTreeMap<String, Written<GcConfig>>,
        >(toml::Value::Table(table))
        .unwrap_err();
        assert_eq!(err.path().to_string(), "gc.threshold_blocks");
    }

    #[test]
    fn the_written_keys_survive_a_json_round_trip() {
        let gc: Written<GcConfig> =
            toml::from_str("policy = \"fifo\"\nthreshold_blocks = 3\n").unwrap();
        let text = serde_json::to_string(&gc).unwrap();
        assert_eq!(text, r#"{"policy":"fifo","threshold_blocks":3}"#);
        let back: Written<GcConfig> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, gc);
    }
}
