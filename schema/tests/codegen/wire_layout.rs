//! The table layouts the browser's verifier walks (`client-web/src/net/verify.ts`),
//! written as TypeScript from flatc's binary reflection schema (`flatc -b --schema`,
//! read with `flatbuffers-reflection`), so the client never restates the schema.
//!
//! Output: `client-web/src/generated/mino/wire-layout.ts`, one `TableLayout`
//! constant per table (`ServerMessage` -> `SERVER_MESSAGE`), leaves first. A
//! field is described by its vtable offset (`vo`, as the reflection schema gives
//! it: 4 + 2 x field id) and what it holds: a scalar of 1, 2, 4 or 8 bytes, an
//! inline struct (size and alignment), a string, a vector of scalars or structs
//! (element size and alignment), a table, a vector of tables, or a union (the
//! vtable offset of its type field and its member tables by type value).
//! Deprecated fields are left out: no reader touches them.
//!
//! Shapes verify.ts cannot check (vectors of strings or unions, 64-bit offsets,
//! required fields, tables that contain themselves) are refused with an error
//! naming the field, so a schema change that needs them fails here, loudly,
//! instead of leaving a field unverified.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use anyhow::{bail, ensure, Context as _, Result};
use flatbuffers_reflection::reflection::{root_as_schema, BaseType, Enum, Field, Object, Schema, Type};

/// The fixed head of the generated file: what it is and the layout types.
const HEAD: &str = "\
// automatically generated from schema/mino.fbs by schema/tests/codegen.rs
// (flatc's reflection schema); do not modify. Regenerate: README.md, \"Protocol\".
//
// The layout of every table of the schema as net/verify.ts walks it: each field
// by its vtable offset `vo` (4 + 2 x field id), with what it holds and its size
// and alignment in bytes. Deprecated fields are left out.

/** One field of a table, by its vtable offset `vo` (4 + 2 * field id). */
export type FieldLayout =
  | { readonly name: string; readonly vo: number; readonly kind: 'scalar'; readonly size: 1 | 2 | 4 | 8 }
  | { readonly name: string; readonly vo: number; readonly kind: 'struct'; readonly size: number; readonly align: number }
  | { readonly name: string; readonly vo: number; readonly kind: 'string' }
  /** A vector of scalars or structs stored inline, `elemSize` bytes each. */
  | { readonly name: string; readonly vo: number; readonly kind: 'vector'; readonly elemSize: number; readonly align: number }
  | { readonly name: string; readonly vo: number; readonly kind: 'table'; readonly table: TableLayout }
  /** A vector of offsets to tables. */
  | { readonly name: string; readonly vo: number; readonly kind: 'tables'; readonly table: TableLayout }
  | {
      readonly name: string;
      readonly vo: number;
      readonly kind: 'union';
      /** vtable offset of the union's type field (a ubyte). */
      readonly typeVo: number;
      /** Member table of each type value (0, NONE, is absent). */
      readonly members: ReadonlyMap<number, TableLayout>;
    };

/** The fields of one table that a reader may touch. */
export interface TableLayout {
  readonly name: string;
  readonly fields: readonly FieldLayout[];
}
";

/// Generates `wire-layout.ts` from a binary reflection schema (`.bfbs`).
///
/// Errors: the buffer is not a reflection schema, or a field has a shape the
/// verifier cannot check (see the module comment).
pub fn generate(bfbs: &[u8]) -> Result<String> {
    let schema = root_as_schema(bfbs).context("not a reflection schema (.bfbs)")?;
    let mut gen =
        Generator { schema, done: BTreeSet::new(), open: BTreeSet::new(), consts: BTreeMap::new(), out: String::new() };
    gen.out.push_str(HEAD);
    for i in 0..schema.objects().len() {
        if !schema.objects().get(i).is_struct() {
            gen.table(i)?;
        }
    }
    Ok(gen.out)
}

/// Walks the tables depth first, writing each after the tables it refers to.
struct Generator<'a> {
    schema: Schema<'a>,
    /// Objects (by index) already written.
    done: BTreeSet<usize>,
    /// Objects being written now: meeting one again is a cycle.
    open: BTreeSet<usize>,
    /// Constant name -> schema name, to refuse two tables with one constant.
    consts: BTreeMap<String, String>,
    out: String,
}

impl<'a> Generator<'a> {
    fn object(&self, index: i32) -> Result<Object<'a>> {
        let objects = self.schema.objects();
        let i = usize::try_from(index)
            .ok()
            .filter(|&i| i < objects.len())
            .with_context(|| format!("object index {index}"))?;
        Ok(objects.get(i))
    }

    fn enum_(&self, index: i32) -> Result<Enum<'a>> {
        let enums = self.schema.enums();
        let i =
            usize::try_from(index).ok().filter(|&i| i < enums.len()).with_context(|| format!("enum index {index}"))?;
        Ok(enums.get(i))
    }

    /// Writes table `index` (and first every table it refers to) unless already written.
    fn table(&mut self, index: usize) -> Result<()> {
        if self.done.contains(&index) {
            return Ok(());
        }
        let obj = self.schema.objects().get(index);
        ensure!(self.open.insert(index), "{} contains itself; verify.ts walks only acyclic schemas", obj.name());
        let mut fields: Vec<Field<'a>> = obj.fields().iter().filter(|f| !f.deprecated()).collect();
        fields.sort_by_key(Field::id);
        let mut lines = Vec::with_capacity(fields.len());
        for f in &fields {
            let what = || format!("{}.{}", obj.name(), f.name());
            if f.type_().base_type() == BaseType::UType {
                continue; // described by its union field
            }
            ensure!(!f.required(), "{}: verify.ts does not check required fields", what());
            let shape = self.shape(obj, *f).with_context(what)?;
            lines.push(format!("    {{ name: '{}', vo: {}, {shape} }},", f.name(), f.offset()));
        }
        self.open.remove(&index);
        let name = short_name(obj.name());
        let constant = constant_name(name);
        if let Some(other) = self.consts.insert(constant.clone(), obj.name().to_owned()) {
            bail!("{} and {other} would both be {constant}", obj.name());
        }
        let _ = writeln!(self.out, "\nexport const {constant}: TableLayout = {{\n  name: '{name}',\n  fields: [");
        for l in lines {
            let _ = writeln!(self.out, "{l}");
        }
        self.out.push_str("  ],\n};\n");
        self.done.insert(index);
        Ok(())
    }

    /// The `kind` and its details for one (non-UType) field of `obj`.
    fn shape(&mut self, obj: Object<'a>, f: Field<'a>) -> Result<String> {
        let ty = f.type_();
        Ok(match ty.base_type() {
            BaseType::String => "kind: 'string'".to_owned(),
            BaseType::Obj => {
                let (target, target_index) = (self.object(ty.index())?, ty.index());
                if target.is_struct() {
                    format!("kind: 'struct', size: {}, align: {}", target.bytesize(), target.minalign())
                } else {
                    format!("kind: 'table', table: {}", self.table_ref(target_index)?)
                }
            }
            BaseType::Vector => self.vector(ty)?,
            BaseType::Union => self.union(obj, f)?,
            b => match scalar_size(b) {
                Some(size) => format!("kind: 'scalar', size: {size}"),
                None => bail!("base type {b:?} is not supported by verify.ts"),
            },
        })
    }

    fn vector(&mut self, ty: Type<'a>) -> Result<String> {
        Ok(match ty.element() {
            BaseType::Obj => {
                let target = self.object(ty.index())?;
                if target.is_struct() {
                    format!("kind: 'vector', elemSize: {}, align: {}", target.bytesize(), target.minalign())
                } else {
                    format!("kind: 'tables', table: {}", self.table_ref(ty.index())?)
                }
            }
            b => match scalar_size(b) {
                Some(size) => format!("kind: 'vector', elemSize: {size}, align: {size}"),
                None => bail!("vectors of {b:?} are not supported by verify.ts"),
            },
        })
    }

    fn union(&mut self, obj: Object<'a>, f: Field<'a>) -> Result<String> {
        let type_field = format!("{}_type", f.name());
        let tf = obj
            .fields()
            .iter()
            .find(|g| g.name() == type_field && g.type_().base_type() == BaseType::UType)
            .with_context(|| format!("no {type_field} field"))?;
        let e = self.enum_(f.type_().index())?;
        ensure!(e.is_union(), "{} is not a union", e.name());
        let mut members = Vec::new();
        for v in e.values() {
            let Some(t) = v.union_type() else { continue };
            match t.base_type() {
                BaseType::None => continue,
                BaseType::Obj => members.push(format!("[{}, {}]", v.value(), self.table_ref(t.index())?)),
                b => bail!("union member {} of type {b:?} is not supported by verify.ts", v.name()),
            }
        }
        Ok(format!(
            "kind: 'union', typeVo: {}, members: new Map<number, TableLayout>([{}])",
            tf.offset(),
            members.join(", ")
        ))
    }

    /// Writes table `index` if needed and returns its constant's name.
    fn table_ref(&mut self, index: i32) -> Result<String> {
        let obj = self.object(index)?;
        ensure!(!obj.is_struct(), "{} is a struct, not a table", obj.name());
        self.table(usize::try_from(index)?)?;
        Ok(constant_name(short_name(obj.name())))
    }
}

/// Size in bytes of a scalar base type, or None for non-scalars.
fn scalar_size(b: BaseType) -> Option<u8> {
    match b {
        BaseType::Bool | BaseType::Byte | BaseType::UByte | BaseType::UType => Some(1),
        BaseType::Short | BaseType::UShort => Some(2),
        BaseType::Int | BaseType::UInt | BaseType::Float => Some(4),
        BaseType::Long | BaseType::ULong | BaseType::Double => Some(8),
        _ => None,
    }
}

/// `mino.wire.ServerMessage` -> `ServerMessage`.
fn short_name(qualified: &str) -> &str {
    qualified.rsplit('.').next().unwrap_or(qualified)
}

/// `ServerMessage` -> `SERVER_MESSAGE`.
fn constant_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() && prev_lower {
            out.push('_');
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        out.push(c.to_ascii_uppercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::constant_name;

    #[test]
    fn constant_names_are_upper_snake_case() {
        assert_eq!(constant_name("ServerMessage"), "SERVER_MESSAGE");
        assert_eq!(constant_name("Error"), "ERROR");
        assert_eq!(constant_name("Vec3Table"), "VEC3_TABLE");
    }
}
