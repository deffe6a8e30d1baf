//! Every WGSL kernel the catalog generated is parsed and validated by naga
//! with no optional capabilities (core WebGPU), without a GPU adapter; a few
//! are snapshotted under `tests/snapshots/` (set `OPS_UPDATE_SNAPSHOTS=1` to
//! rewrite them after an intended change).

use std::collections::HashSet;
use std::path::PathBuf;

use naga::valid::{Capabilities, ValidationFlags, Validator};

#[test]
fn every_generated_kernel_validates_with_core_capabilities() {
    let mut keys = HashSet::new();
    let mut count = 0;
    for info in ops::catalog() {
        assert!(!info.kernels.is_empty(), "{} has no kernels", info.name);
        for k in info.kernels {
            assert!(keys.insert(k.key), "kernel key {} is not unique", k.key);
            assert!(
                k.key.starts_with(&info.qualified_name()),
                "{} is not keyed by its operator",
                k.key
            );
            let module = naga::front::wgsl::parse_str(k.wgsl())
                .unwrap_or_else(|e| panic!("{}: {}", k.key, e.emit_to_string(k.wgsl())));
            Validator::new(ValidationFlags::all(), Capabilities::empty())
                .validate(&module)
                .unwrap_or_else(|e| panic!("{}: {}", k.key, e.emit_to_string(k.wgsl())));
            assert!(
                module.entry_points.iter().any(|e| e.name == k.entry),
                "{}: no entry point {}",
                k.key,
                k.entry
            );
            // Its segmented variant, which every generated kernel carries
            // unless its tensors, four bindings each, would exceed core
            // WebGPU's 8 storage buffers per stage (an element-wise kernel
            // of several inputs).
            let tensors = k
                .bindings
                .iter()
                .filter(|b| **b != ops_core::Access::Uniform)
                .count();
            match k.segmented() {
                None => assert!(tensors > 2, "{}: no segmented variant", k.key),
                Some((segments, seg)) => {
                    assert_eq!(segments.len(), k.bindings.len(), "{}", k.key);
                    let module = naga::front::wgsl::parse_str(seg).unwrap_or_else(|e| {
                        panic!("{} (segmented): {}", k.key, e.emit_to_string(seg))
                    });
                    Validator::new(ValidationFlags::all(), Capabilities::empty())
                        .validate(&module)
                        .unwrap_or_else(|e| {
                            panic!("{} (segmented): {}", k.key, e.emit_to_string(seg))
                        });
                }
            }
            assert!(
                k.is_generated(),
                "{}: the catalog's kernels are generated on first use",
                k.key
            );
            assert!(
                k.wgsl().starts_with("// @generated from "),
                "{}: missing the generated header",
                k.key
            );
            assert!(
                k.wgsl().contains("const WORKGROUP_SIZE"),
                "{}: no WORKGROUP_SIZE",
                k.key
            );
            count += 1;
        }
    }
    assert!(count >= 160, "only {count} kernels");
}

#[test]
fn snapshots_of_selected_kernels_match() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("snapshots");
    let update = std::env::var_os("OPS_UPDATE_SNAPSHOTS").is_some();
    let wanted = [
        "ArgMin/reduce_rows/FLOAT16/UINT64",
        "ArgMin/reduce_tree/INT64/UINT32",
        "ArgMax/reduce_rows/UINT8/INT32",
        "ArgMin/reduce_split_lanes/FLOAT16/INT64",
        "ReduceMin/reduce_columns/FLOAT32/FLOAT32",
        "Scatter/scatter_column_vectors/FLOAT16/INT32",
        "Reduce.SUM/fold_input/FLOAT16",
        "Reduce.SUM/fold_partials/INT64",
    ];
    for key in wanted {
        let k = ops::catalog()
            .iter()
            .flat_map(|i| i.kernels.iter())
            .find(|k| k.key == key)
            .unwrap_or_else(|| panic!("no kernel {key}"));
        let path = dir.join(format!("{}.wgsl", key.replace('/', "__")));
        // The plain module, then its segmented variant.
        let text = match k.segmented() {
            Some((segments, seg)) => format!(
                "{}\n// ---- segmented variant, segments per binding {:?} ----\n\n{}",
                k.wgsl(),
                segments,
                seg
            ),
            None => k.wgsl().to_string(),
        };
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("{}: {e} (run with OPS_UPDATE_SNAPSHOTS=1)", path.display())
        });
        assert!(
            want == text,
            "{key} differs from {} (run with OPS_UPDATE_SNAPSHOTS=1 and review the diff)",
            path.display()
        );
    }
}
