//! Shell variables: values, the export flag, and a bound on their total size.

use std::collections::BTreeMap;

/// The most bytes all variable values may hold together (16 MiB). Without it `A=$A$A` repeated
/// doubles memory on each command: a 1 MiB script could ask for far more than any host has.
pub(crate) const MAX_VARIABLE_BYTES: usize = 16 << 20;

#[derive(Clone, Debug, Default)]
struct Var {
    /// `None` for `export NAME` of a variable that has no value yet (bash's `declare -x NAME`).
    value: Option<String>,
    exported: bool,
}

/// The variable table.
#[derive(Clone, Debug, Default)]
pub(crate) struct Vars {
    map: BTreeMap<String, Var>,
    bytes: usize,
}

/// A variable's state saved by [`Vars::save`].
#[derive(Debug)]
pub(crate) struct Saved(Option<Var>);

/// Setting the variable would take the table over [`MAX_VARIABLE_BYTES`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooLarge;

/// Whether `s` is a valid variable name (`[A-Za-z_][A-Za-z0-9_]*`).
pub(crate) fn is_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl Vars {
    /// The value of `name`, if it is set.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.map.get(name).and_then(|v| v.value.as_deref())
    }

    /// Sets `name` to `value`, keeping its export flag.
    pub fn set(&mut self, name: &str, value: String) -> Result<(), TooLarge> {
        let old = self.get(name).map_or(0, str::len);
        let bytes = self.bytes - old + value.len();
        if bytes > MAX_VARIABLE_BYTES {
            return Err(TooLarge);
        }
        self.bytes = bytes;
        self.map.entry(name.to_owned()).or_default().value = Some(value);
        Ok(())
    }

    /// Sets `name` and marks it exported.
    pub fn set_exported(&mut self, name: &str, value: String) -> Result<(), TooLarge> {
        self.set(name, value)?;
        self.export(name);
        Ok(())
    }

    /// Marks `name` exported (it need not have a value).
    pub fn export(&mut self, name: &str) {
        self.map.entry(name.to_owned()).or_default().exported = true;
    }

    /// Removes the export flag of `name`.
    pub fn unexport(&mut self, name: &str) {
        if let Some(v) = self.map.get_mut(name) {
            v.exported = false;
        }
    }

    /// Whether `name` is exported.
    #[cfg(test)]
    pub fn is_exported(&self, name: &str) -> bool {
        self.map.get(name).is_some_and(|v| v.exported)
    }

    /// Removes `name`.
    pub fn unset(&mut self, name: &str) {
        if let Some(v) = self.map.remove(name) {
            self.bytes -= v.value.map_or(0, |s| s.len());
        }
    }

    /// What `name` holds now, to put back with [`Vars::restore`] after a temporary assignment
    /// (`A=1 cmd`).
    pub fn save(&self, name: &str) -> Saved {
        Saved(self.map.get(name).cloned())
    }

    /// Puts back what [`Vars::save`] returned.
    pub fn restore(&mut self, name: &str, saved: Saved) {
        self.unset(name);
        if let Some(var) = saved.0 {
            self.bytes += var.value.as_ref().map_or(0, String::len);
            self.map.insert(name.to_owned(), var);
        }
    }

    /// The exported variables that have a value, sorted by name: the environment of a command.
    pub fn env(&self) -> Vec<(String, String)> {
        self.map
            .iter()
            .filter(|(_, v)| v.exported)
            .filter_map(|(k, v)| v.value.as_ref().map(|val| (k.clone(), val.clone())))
            .collect()
    }

    /// Every variable that has a value, sorted by name (`set` alone).
    pub fn all(&self) -> impl Iterator<Item = (&str, &str)> {
        self.map
            .iter()
            .filter_map(|(k, v)| v.value.as_deref().map(|val| (k.as_str(), val)))
    }

    /// Every exported variable with its value if it has one, sorted by name (`export -p`).
    pub fn exported(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.map
            .iter()
            .filter(|(_, v)| v.exported)
            .map(|(k, v)| (k.as_str(), v.value.as_deref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["A", "_", "a_1", "PATH"] {
            assert!(is_name(ok), "{ok}");
        }
        for bad in ["", "1a", "a-b", "a.b", "é"] {
            assert!(!is_name(bad), "{bad}");
        }
    }

    #[test]
    fn export_and_env() {
        let mut v = Vars::default();
        v.set("A", "1".into()).unwrap();
        v.set_exported("B", "2".into()).unwrap();
        v.export("C");
        assert_eq!(v.env(), vec![("B".to_owned(), "2".to_owned())]);
        v.export("A");
        v.unexport("B");
        assert_eq!(v.env(), vec![("A".to_owned(), "1".to_owned())]);
        assert_eq!(
            v.exported().collect::<Vec<_>>(),
            vec![("A", Some("1")), ("C", None)]
        );
        v.unset("A");
        assert_eq!(v.get("A"), None);
    }

    #[test]
    fn temporary_assignments_are_undone() {
        let mut v = Vars::default();
        v.set("A", "old".into()).unwrap();
        let a = v.save("A");
        let b = v.save("B");
        v.set_exported("A", "new".into()).unwrap();
        v.set_exported("B", "tmp".into()).unwrap();
        v.restore("A", a);
        v.restore("B", b);
        assert_eq!(v.get("A"), Some("old"));
        assert!(!v.is_exported("A"));
        assert_eq!(v.get("B"), None);
        assert_eq!(v.bytes, 3);
    }

    #[test]
    fn total_size_is_bounded() {
        let mut v = Vars::default();
        v.set("A", "x".repeat(MAX_VARIABLE_BYTES)).unwrap();
        assert_eq!(v.set("B", "y".into()), Err(TooLarge));
        v.set("A", String::new()).unwrap();
        v.set("B", "y".into()).unwrap();
    }
}
