//! `replayground-split count`: the whole module instrumented to count its
//! direct calls, caller by callee, so that the split can keep the calls a
//! search makes most often on one side (a call from one part into the other
//! is never inlined and goes through an import or the table).
//!
//! Every direct `call` gets a counter of its own (a mutable i64 global per
//! caller and callee); an exported `__count_dump(ptr)` stores them all at
//! `ptr`, eight bytes each, in the order of the edge list written beside the
//! module: a line `caller<TAB>callee` per counter (names without rustc's
//! hash), preceded by a line per function, `=<TAB>name<TAB>instructions<TAB>
//! place`, where `place` is `copied`, `primary` or `listed` (see `Place`),
//! and followed by a counter per function of the times it was entered
//! however it was called (directly, through the table or from JS), a line
//! `><TAB>name` each. scripts/split/calls.mjs runs the benchmark's work on the
//! counted module; hot.py chooses.
use std::collections::HashMap;

use walrus::ir::{BinaryOp, Instr, InstrSeq, InstrSeqId, MemArg, StoreKind, Value, Visitor};
use walrus::{ConstExpr, FunctionBuilder, FunctionId, FunctionKind, ValType};

use crate::{canonical, memory_of, place, read, Place};

/// The instruction sequences (blocks) of a function's body.
#[derive(Default)]
struct Seqs(Vec<InstrSeqId>);

impl<'a> Visitor<'a> for Seqs {
    fn start_instr_seq(&mut self, seq: &'a InstrSeq) {
        self.0.push(seq.id());
    }
}

/// A new counter: a mutable i64 global, 0 to start with.
fn counter(globals: &mut walrus::ModuleGlobals) -> walrus::GlobalId {
    globals.add_local(ValType::I64, true, false, ConstExpr::Value(Value::I64(0)))
}

/// The instructions that add one to `counter`.
fn bump(counter: walrus::GlobalId) -> [Instr; 4] {
    [
        Instr::GlobalGet(walrus::ir::GlobalGet { global: counter }),
        Instr::Const(walrus::ir::Const {
            value: Value::I64(1),
        }),
        Instr::Binop(walrus::ir::Binop {
            op: BinaryOp::I64Add,
        }),
        Instr::GlobalSet(walrus::ir::GlobalSet { global: counter }),
    ]
}

pub fn count(whole: &str, out: &str, edges_out: &str) -> Result<String, String> {
    let bytes = std::fs::read(whole).map_err(|e| format!("{whole}: {e}"))?;
    let mut m = read(&bytes)?;
    let order: Vec<FunctionId> = m.funcs.iter().map(|f| f.id()).collect();
    let name_of = |m: &walrus::Module, f: FunctionId| -> String {
        m.funcs
            .get(f)
            .name
            .as_deref()
            .map_or_else(|| format!("#{f:?}"), |n| canonical(n).to_string())
    };
    let mut lines = Vec::new();
    for &f in &order {
        if let FunctionKind::Local(l) = &m.funcs.get(f).kind {
            lines.push(format!(
                "=\t{}\t{}\t{}",
                name_of(&m, f),
                l.size(),
                match place(&m, f) {
                    Place::Copied => "copied",
                    Place::Primary => "primary",
                    Place::Listed => "listed",
                }
            ));
        }
    }
    let mut counters: HashMap<(FunctionId, FunctionId), walrus::GlobalId> = HashMap::new();
    let mut edges = Vec::new();
    let mut calls = 0usize;
    for &f in &order {
        let seqs = match &m.funcs.get(f).kind {
            FunctionKind::Local(l) => {
                let mut s = Seqs::default();
                walrus::ir::dfs_in_order(&mut s, l, l.entry_block());
                s.0
            }
            _ => continue,
        };
        for seq in seqs {
            let callees: Vec<FunctionId> = match &m.funcs.get(f).kind {
                FunctionKind::Local(l) => l
                    .block(seq)
                    .instrs
                    .iter()
                    .filter_map(|(i, _)| match i {
                        Instr::Call(c) => Some(c.func),
                        _ => None,
                    })
                    .collect(),
                _ => unreachable!(),
            };
            let globals: Vec<walrus::GlobalId> = callees
                .iter()
                .map(|&g| {
                    *counters.entry((f, g)).or_insert_with(|| {
                        edges.push((f, g));
                        counter(&mut m.globals)
                    })
                })
                .collect();
            calls += globals.len();
            let FunctionKind::Local(l) = &mut m.funcs.get_mut(f).kind else {
                unreachable!()
            };
            let block = l.block_mut(seq);
            let old = std::mem::take(&mut block.instrs);
            let mut next = globals.into_iter();
            for (instr, loc) in old {
                if matches!(instr, Instr::Call(_)) {
                    let global = next.next().expect("one counter per call");
                    block.instrs.extend(bump(global).map(|i| (i, loc)));
                }
                block.instrs.push((instr, loc));
            }
        }
    }
    // A counter at each local function's entry.
    let mut entries = Vec::new();
    for &f in &order {
        let FunctionKind::Local(l) = &mut m.funcs.get_mut(f).kind else {
            continue;
        };
        let global = counter(&mut m.globals);
        let entry = l.entry_block();
        let block = l.block_mut(entry);
        let at = block
            .instrs
            .first()
            .map(|(_, loc)| *loc)
            .unwrap_or_default();
        block.instrs.splice(0..0, bump(global).map(|i| (i, at)));
        entries.push((f, global));
    }
    let mut dumped: Vec<walrus::GlobalId> = Vec::new();
    for &(f, g) in &edges {
        lines.push(format!("{}\t{}", name_of(&m, f), name_of(&m, g)));
        dumped.push(counters[&(f, g)]);
    }
    for &(f, global) in &entries {
        lines.push(format!(">\t{}", name_of(&m, f)));
        dumped.push(global);
    }
    // __count_dump(ptr): every counter, in the edge list's order.
    let memory = memory_of(&m)?;
    let mut builder = FunctionBuilder::new(&mut m.types, &[ValType::I32], &[]);
    let ptr = m.locals.add(ValType::I32);
    let mut body = builder.func_body();
    for (k, &global) in dumped.iter().enumerate() {
        let offset = u64::try_from(k * 8).map_err(|_| "too many counters")?;
        body.local_get(ptr).global_get(global).store(
            memory,
            StoreKind::I64 { atomic: false },
            MemArg { align: 8, offset },
        );
    }
    let dump = builder.finish(vec![ptr], &mut m.funcs);
    m.exports.add("__count_dump", dump);
    std::fs::write(out, m.emit_wasm()).map_err(|e| format!("{out}: {e}"))?;
    std::fs::write(edges_out, lines.join("\n") + "\n").map_err(|e| format!("{edges_out}: {e}"))?;
    Ok(format!(
        "{calls} calls counted by {} counters (caller, callee), and {} functions' entries",
        edges.len(),
        entries.len()
    ))
}
