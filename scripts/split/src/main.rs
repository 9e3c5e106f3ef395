//! Splits the playground's module in two: the functions a first visit runs
//! (named in `first-visit.txt`) and those the benchmark's work calls most
//! often from them or they from it (`hot-calls.txt`, see `count`) stay in
//! the primary module, which the page loads first; every other function's
//! body moves to the rest, a second module fetched after the start.
//!
//! Usage: replayground-split WHOLE.wasm PRIMARY.wasm REST.wasm NAMES.json LIST.txt...
//!        replayground-split count WHOLE.wasm COUNTED.wasm EDGES.tsv
//!
//! NAMES.json says under which names the two parts meet (the exports the
//! glue uses to load the rest): scripts/split/patch_glue.py reads it.
//!
//! In the primary, each function that moved keeps its index and type but
//! its body becomes a trampoline: on the first call of any of them it calls
//! the loader (table 0's last slot, which the JS glue fills: it instantiates
//! the rest) and then it calls the body through its own slot of table 0.
//! The rest imports the primary's memory, tables, globals and the functions
//! its bodies call, and an element segment of its own puts the bodies into
//! their slots when it is instantiated. Calls from the primary into the rest
//! go through the table; calls inside the rest stay direct.
//!
//! Functions stay in the primary when a list names them (a name without
//! its hash: monomorphised copies share a name, and all of them stay), and
//! whatever the lists say (`place`) when they have no name, when they touch
//! data or element segments (which stay in the primary), and when they are
//! small (`SMALL`): those the rest calls are copied into it, so that its hot
//! paths do not cross into the primary for a few instructions.
use std::collections::{BTreeSet, HashMap, HashSet};
use std::process::ExitCode;

mod count;

use walrus::ir::{dfs_in_order, UnaryOp, Value, Visitor};
use walrus::{
    ConstExpr, ElementItems, ElementKind, ExportItem, FunctionBuilder, FunctionId, FunctionKind,
    GlobalKind, ImportKind, ImportedFunction, Module, ModuleConfig, ValType,
};

/// The names the primary exports for the rest to import, and the JS glue
/// reads (scripts/split/patch_glue.py declares the same three).
const LOADED: &str = "__split_loaded";
const LOADER_SLOT: &str = "__split_loader_slot";
const PRIMARY: &str = "primary";
/// The shadow stack's pointer (rustc's name for it), and the name under
/// which the rest exports its own.
const STACK_POINTER: &str = "__stack_pointer";
const REST_STACK_POINTER: &str = "__split_stack_pointer";

/// The name under which the primary exports its global `k` for the rest.
fn global_export(k: usize) -> String {
    format!("__split_g{k}")
}

/// The name under which the primary exports its table `k` for the rest.
fn table_export(k: usize) -> String {
    format!("__split_t{k}")
}

/// The name under which the primary exports its function `i` (by index in
/// the whole module) for the rest.
fn function_export(i: usize) -> String {
    format!("__split_f{i}")
}

/// A module's memory: the one it has.
fn memory_of(m: &Module) -> Result<walrus::MemoryId, String> {
    m.memories
        .iter()
        .next()
        .map(|m| m.id())
        .ok_or_else(|| "the module has no memory".into())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [command, whole, counted, edges] = args.as_slice() {
        if command == "count" {
            return report("split count", count::count(whole, counted, edges));
        }
    }
    let [whole, primary_out, rest_out, names_out, lists @ ..] = args.as_slice() else {
        eprintln!(
            "usage: replayground-split WHOLE.wasm PRIMARY.wasm REST.wasm NAMES.json LIST.txt...\n       \
             replayground-split count WHOLE.wasm COUNTED.wasm EDGES.tsv"
        );
        return ExitCode::from(2);
    };
    let names = format!(
        "{{\"namespace\": \"{PRIMARY}\", \"loaded\": \"{LOADED}\", \"loaderSlot\": \"{LOADER_SLOT}\", \
         \"table\": \"{}\", \"restStackPointer\": \"{REST_STACK_POINTER}\"}}\n",
        // The function table, the loader's and the moved functions' slots.
        table_export(0)
    );
    if let Err(e) = std::fs::write(names_out, names) {
        eprintln!("split: {names_out}: {e}");
        return ExitCode::FAILURE;
    }
    report("split", split(whole, lists, primary_out, rest_out))
}

/// Prints what a command did, or why it failed.
fn report(command: &str, outcome: Result<String, String>) -> ExitCode {
    match outcome {
        Ok(summary) => {
            eprintln!("{command}: {summary}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{command}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn read(bytes: &[u8]) -> Result<Module, String> {
    let mut config = ModuleConfig::new();
    // Neither part keeps names: the whole module has them only for this split.
    // (REPLAYGROUND_SPLIT_NAMES=1 keeps them, to profile the parts.)
    let names = std::env::var_os("REPLAYGROUND_SPLIT_NAMES").is_some();
    config
        .generate_name_section(names)
        .generate_producers_section(false);
    Module::from_buffer_with_config(bytes, &config)
        .map_err(|e| format!("cannot read the module: {e}"))
}

/// A function's name without the hash rustc appends (`…::h0123456789abcdef`).
fn canonical(name: &str) -> &str {
    match name.rsplit_once("::h") {
        Some((path, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            path
        }
        _ => name,
    }
}

/// The functions, data and element segments a function's body refers to.
#[derive(Default)]
struct Refs {
    funcs: BTreeSet<FunctionId>,
    segments: bool,
}

impl<'a> Visitor<'a> for Refs {
    fn visit_function_id(&mut self, f: &FunctionId) {
        self.funcs.insert(*f);
    }
    fn visit_data_id(&mut self, _: &walrus::DataId) {
        self.segments = true;
    }
    fn visit_element_id(&mut self, _: &walrus::ElementId) {
        self.segments = true;
    }
}

/// Functions of at most this many instructions stay in the primary and are
/// copied into the rest where its bodies call them.
const SMALL: u64 = 60;

fn small(m: &Module, f: FunctionId) -> bool {
    matches!(&m.funcs.get(f).kind, FunctionKind::Local(l) if l.size() <= SMALL)
}

/// Where a local function's body may be, whatever the lists say.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Small and touching no segment: it stays in the primary and is
    /// copied into the rest wherever the rest's bodies call it, so each
    /// part calls a copy of its own.
    Copied,
    /// In the primary only: it has no name (no list could name it) or it
    /// touches a data or element segment (which stay in the primary).
    Primary,
    /// Where the lists say: in the primary if one names it, else in the rest.
    Listed,
}

fn place(m: &Module, f: FunctionId) -> Place {
    let segments = refs(m, f).segments;
    if small(m, f) && !segments {
        Place::Copied
    } else if segments || m.funcs.get(f).name.is_none() {
        Place::Primary
    } else {
        Place::Listed
    }
}

fn refs(m: &Module, f: FunctionId) -> Refs {
    let mut r = Refs::default();
    if let FunctionKind::Local(l) = &m.funcs.get(f).kind {
        dfs_in_order(&mut r, l, l.entry_block());
    }
    r
}

fn split(
    whole: &str,
    lists: &[String],
    primary_out: &str,
    rest_out: &str,
) -> Result<String, String> {
    let bytes = std::fs::read(whole).map_err(|e| format!("{whole}: {e}"))?;
    let mut text = String::new();
    for list in lists {
        text += &std::fs::read_to_string(list).map_err(|e| format!("{list}: {e}"))?;
        text.push('\n');
    }
    let listed: HashSet<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();

    let mut primary = read(&bytes)?;
    // Function ids in index order (imports first): the rest, read again
    // from the same bytes, has the same order.
    let order: Vec<FunctionId> = primary.funcs.iter().map(|f| f.id()).collect();
    let index: HashMap<FunctionId, usize> =
        order.iter().enumerate().map(|(i, f)| (*f, i)).collect();
    if !primary.funcs.iter().any(|f| f.name.is_some()) {
        return Err(format!(
            "{whole} has no function names (build it with wasm-opt -g)"
        ));
    }
    let mut moved = Vec::new();
    let mut listed_found = HashSet::new();
    for (i, &f) in order.iter().enumerate() {
        let func = primary.funcs.get(f);
        if !matches!(func.kind, FunctionKind::Local(_)) {
            continue;
        }
        if let Some(name) = func.name.as_deref().map(canonical) {
            if listed.contains(name) {
                listed_found.insert(name.to_string());
                continue;
            }
        }
        if place(&primary, f) == Place::Listed {
            moved.push(i);
        }
    }
    let moved_set: HashSet<usize> = moved.iter().copied().collect();
    // What the rest's bodies call or refer to outside themselves: a small
    // function is copied into the rest (a call to it stays a direct call,
    // which V8 may inline, where a call into another instance cannot be),
    // with what it calls in turn; every other one the primary exports.
    let mut copied = HashSet::new();
    let mut needed = BTreeSet::new();
    let mut work: Vec<FunctionId> = moved.iter().map(|&i| order[i]).collect();
    while let Some(f) = work.pop() {
        for g in refs(&primary, f).funcs {
            let gi = index[&g];
            if moved_set.contains(&gi) || copied.contains(&gi) || needed.contains(&gi) {
                continue;
            }
            if matches!(primary.funcs.get(g).kind, FunctionKind::Local(_))
                && place(&primary, g) == Place::Copied
            {
                copied.insert(gi);
                work.push(g);
            } else {
                needed.insert(gi);
            }
        }
    }

    // Table 0 (funcref) grows by a slot per moved function and the loader's.
    let table0 = primary
        .tables
        .iter()
        .find(|t| t.element_ty == walrus::RefType::FUNCREF)
        .map(|t| t.id())
        .ok_or("the module has no function table")?;
    if primary.tables.iter().next().map(|t| t.id()) != Some(table0) {
        return Err("the function table is not table 0".into());
    }
    let base = primary.tables.get(table0).initial;
    let loader_slot = base + moved.len() as u64;
    let slots = u32::try_from(loader_slot + 1).map_err(|_| "too many functions")?;
    {
        let t = primary.tables.get_mut(table0);
        t.initial = u64::from(slots);
        t.maximum = Some(u64::from(slots));
    }
    let loaded =
        primary
            .globals
            .add_local(ValType::I32, true, false, ConstExpr::Value(Value::I32(0)));
    let loader = primary.globals.add_local(
        ValType::I32,
        false,
        false,
        ConstExpr::Value(Value::I32(loader_slot as i32)),
    );
    let no_arguments = primary.types.add(&[], &[]);
    for (slot, &i) in moved.iter().enumerate() {
        let f = order[i];
        let ty = primary.funcs.get(f).ty();
        let (params, results) = {
            let t = primary.types.get(ty);
            (t.params().to_vec(), t.results().to_vec())
        };
        let mut builder = FunctionBuilder::new(&mut primary.types, &params, &results);
        let locals: Vec<_> = params.iter().map(|&p| primary.locals.add(p)).collect();
        let mut body = builder.func_body();
        body.global_get(loaded).unop(UnaryOp::I32Eqz).if_else(
            None,
            |then| {
                then.i32_const(loader_slot as i32)
                    .call_indirect(no_arguments, table0);
            },
            |_| {},
        );
        for &l in &locals {
            body.local_get(l);
        }
        body.i32_const((base + slot as u64) as i32)
            .call_indirect(ty, table0);
        primary.funcs.get_mut(f).kind = FunctionKind::Local(builder.local_func(locals));
    }

    // What the rest imports from the primary, exported under names of its own.
    primary.exports.add(LOADED, loaded);
    primary.exports.add(LOADER_SLOT, loader);
    let globals: Vec<_> = primary.globals.iter().map(|g| g.id()).collect();
    for (k, &g) in globals.iter().enumerate() {
        let stack_pointer = primary.globals.get(g).name.as_deref() == Some(STACK_POINTER);
        if g != loaded && g != loader && !stack_pointer {
            primary.exports.add(&global_export(k), g);
        }
    }
    let tables: Vec<_> = primary.tables.iter().map(|t| t.id()).collect();
    for (k, &t) in tables.iter().enumerate() {
        primary.exports.add(&table_export(k), t);
    }
    let memory = memory_of(&primary)?;
    if !primary
        .exports
        .iter()
        .any(|e| matches!(e.item, ExportItem::Memory(m) if m == memory) && e.name == "memory")
    {
        return Err("the module does not export its memory as `memory`".into());
    }
    for &i in &needed {
        primary.exports.add(&function_export(i), order[i]);
    }
    walrus::passes::gc::run(&mut primary);
    let primary_bytes = primary.emit_wasm();

    // The rest: the moved bodies; everything else comes from the primary.
    let mut rest = read(&bytes)?;
    let order_rest: Vec<FunctionId> = rest.funcs.iter().map(|f| f.id()).collect();
    if order_rest.len() != order.len() {
        return Err("the module read twice differs".into());
    }
    for e in rest.exports.iter().map(|e| e.id()).collect::<Vec<_>>() {
        rest.exports.delete(e);
    }
    rest.start = None;
    for &i in &needed {
        let f = order_rest[i];
        let name = function_export(i);
        match &rest.funcs.get(f).kind {
            FunctionKind::Import(imported) => {
                let import = rest.imports.get_mut(imported.import);
                import.module = PRIMARY.into();
                import.name = name;
            }
            _ => {
                let ty = rest.funcs.get(f).ty();
                let import = rest.imports.add(PRIMARY, &name, ImportKind::Function(f));
                rest.funcs.get_mut(f).kind = FunctionKind::Import(ImportedFunction { import, ty });
            }
        }
    }
    let globals_rest: Vec<_> = rest.globals.iter().map(|g| g.id()).collect();
    for (k, &g) in globals_rest.iter().enumerate() {
        if !matches!(rest.globals.get(g).kind, GlobalKind::Local(_)) {
            return Err("the module imports a global (not handled)".into());
        }
        if rest.globals.get(g).name.as_deref() == Some(STACK_POINTER) {
            // The rest's own stack pointer, on a stack of its own that the
            // glue allocates: an imported mutable global is read through a
            // cell, and nearly every function reads and writes this one.
            rest.exports.add(REST_STACK_POINTER, g);
            continue;
        }
        let import = rest
            .imports
            .add(PRIMARY, &global_export(k), ImportKind::Global(g));
        rest.globals.get_mut(g).kind = GlobalKind::Import(import);
    }
    if !rest.exports.iter().any(|e| e.name == REST_STACK_POINTER) {
        return Err(format!("the module has no global named {STACK_POINTER}"));
    }
    let tables_rest: Vec<_> = rest.tables.iter().map(|t| t.id()).collect();
    for (k, &t) in tables_rest.iter().enumerate() {
        if rest.tables.get(t).import.is_some() {
            return Err("the module imports a table (not handled)".into());
        }
        let import = rest
            .imports
            .add(PRIMARY, &table_export(k), ImportKind::Table(t));
        let table = rest.tables.get_mut(t);
        table.import = Some(import);
        table.elem_segments.clear();
        if k == 0 {
            table.initial = u64::from(slots);
            table.maximum = Some(u64::from(slots));
        }
    }
    let memory_rest = memory_of(&rest)?;
    if rest.memories.get(memory_rest).import.is_some() {
        return Err("the module imports its memory (not handled)".into());
    }
    let import = rest
        .imports
        .add(PRIMARY, "memory", ImportKind::Memory(memory_rest));
    let m = rest.memories.get_mut(memory_rest);
    m.import = Some(import);
    m.data_segments.clear();
    for d in rest.data.iter().map(|d| d.id()).collect::<Vec<_>>() {
        rest.data.delete(d);
    }
    for e in rest.elements.iter().map(|e| e.id()).collect::<Vec<_>>() {
        rest.elements.delete(e);
    }
    let segment = rest.elements.add(
        ElementKind::Active {
            table: tables_rest[0],
            offset: ConstExpr::Value(Value::I32(base as i32)),
        },
        ElementItems::Functions(moved.iter().map(|&i| order_rest[i]).collect()),
    );
    rest.tables
        .get_mut(tables_rest[0])
        .elem_segments
        .insert(segment);
    // The functions neither moved nor imported are unreferenced now.
    walrus::passes::gc::run(&mut rest);
    let rest_bytes = rest.emit_wasm();

    std::fs::write(primary_out, &primary_bytes).map_err(|e| format!("{primary_out}: {e}"))?;
    std::fs::write(rest_out, &rest_bytes).map_err(|e| format!("{rest_out}: {e}"))?;
    Ok(format!(
        "{} of {} listed names found; {} functions moved to the rest, {} small ones copied into it, \
         {} it calls in the primary; primary {} bytes, rest {} bytes",
        listed_found.len(),
        listed.len(),
        moved.len(),
        copied.len(),
        needed.len(),
        primary_bytes.len(),
        rest_bytes.len(),
    ))
}
