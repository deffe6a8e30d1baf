//! The pad family's constant given as a scalar attribute (DirectML
//! PADDING1's `PaddingValue`), on the GPU against the CPU reference: the
//! constant converted per data type as `cast<T>` converts, 8-bit data whose
//! element count is no multiple of 4 (the last packed word partly filled),
//! the segmented kernels, and more than 65,535 workgroups (a 2-D grid).

use ops::padding1::{PaddingMode, TensorDataType};
use ops::Padding1Desc;
use ops_core::{DataType, FeatureLevel, HostTensor, Operator, TensorDesc};
use ops_tests::{assert_bitwise_eq, gpu, segmented_context_for, tensor_with_edges, Rng};

/// The `PaddingValueDataType` member naming `dtype`.
fn value_type(dtype: DataType) -> TensorDataType {
    match dtype {
        DataType::Float32 => TensorDataType::DmlTensorDataTypeFloat32,
        DataType::Float16 => TensorDataType::DmlTensorDataTypeFloat16,
        DataType::Float64 => TensorDataType::DmlTensorDataTypeFloat64,
        DataType::Uint32 => TensorDataType::DmlTensorDataTypeUint32,
        DataType::Uint16 => TensorDataType::DmlTensorDataTypeUint16,
        DataType::Uint8 => TensorDataType::DmlTensorDataTypeUint8,
        DataType::Int32 => TensorDataType::DmlTensorDataTypeInt32,
        DataType::Int16 => TensorDataType::DmlTensorDataTypeInt16,
        DataType::Int8 => TensorDataType::DmlTensorDataTypeInt8,
        DataType::Uint64 => TensorDataType::DmlTensorDataTypeUint64,
        DataType::Int64 => TensorDataType::DmlTensorDataTypeInt64,
        other => panic!("PADDING1 has no {other}"),
    }
}

fn padding1(
    x: &HostTensor,
    mode: PaddingMode,
    value: f64,
    start: &[u32],
    end: &[u32],
) -> Padding1Desc {
    let d = Padding1Desc::builder()
        .input(x.desc().clone())
        .padding_mode(mode)
        .padding_value_data_type(value_type(x.dtype()))
        .padding_value(value)
        .start_padding(start)
        .end_padding(end)
        .build()
        .unwrap_or_else(|e| panic!("{mode:?} {start:?} {end:?}: {e}"));
    d.validate(FeatureLevel::FL5_0).unwrap();
    d
}

/// Runs `d` on the CPU reference, the shared context and, when the output
/// is large enough, a context that binds it in segments; all bit for bit.
fn same_everywhere(d: &Padding1Desc, x: &HostTensor) -> HostTensor {
    let cpu = d.run_cpu(&[x]).unwrap().remove(0);
    let gpu_out = gpu().run(d, &[x]).unwrap().remove(0);
    assert_bitwise_eq(&gpu_out, &cpu, &format!("{d:?}"));
    let bytes = cpu.bytes().len() as u64;
    if let Some(ctx) = segmented_context_for(bytes) {
        let seg = ctx.run(d, &[x]).unwrap().remove(0);
        assert_bitwise_eq(&seg, &cpu, &format!("segmented {d:?}"));
    }
    cpu
}

/// Every mode and data type, with element counts that leave the last
/// packed word of 8- and 16-bit data partly filled, paddings beyond the
/// dimension, and constants that round, truncate, saturate or are NaN.
#[test]
fn every_mode_and_type_matches_the_reference() {
    let mut rng = Rng::new(5);
    let types = [
        DataType::Uint8,
        DataType::Int8,
        DataType::Uint16,
        DataType::Int16,
        DataType::Float16,
        DataType::Float32,
        DataType::Int32,
        DataType::Uint32,
        DataType::Float64,
        DataType::Int64,
        DataType::Uint64,
    ];
    let modes = [
        PaddingMode::Constant,
        PaddingMode::Edge,
        PaddingMode::Reflection,
        PaddingMode::Symmetric,
    ];
    // (input sizes, start, end): 10 x 15 = 150 and 50 x 63 = 3150 outputs
    // (2 modulo 4); a single row padded beyond its length.
    let shapes: [(&[u32], &[u32], &[u32]); 3] = [
        (&[3, 5], &[2, 7], &[5, 3]),
        (&[37, 41], &[6, 9], &[7, 13]),
        (&[1, 3], &[0, 11], &[2, 8]),
    ];
    let values = [-300.5, 9.75, 65520.0, f64::NAN, -0.0, 1e30];
    for &dt in &types {
        for (i, &(sizes, start, end)) in shapes.iter().enumerate() {
            let x = tensor_with_edges(dt, sizes, &mut rng);
            for (m, mode) in modes.into_iter().enumerate() {
                let value = values[(i + m) % values.len()];
                let d = padding1(&x, mode, value, start, end);
                let out = same_everywhere(&d, &x);
                let count = out.desc().element_count().unwrap();
                assert_eq!(
                    count,
                    sizes
                        .iter()
                        .zip(start.iter().zip(end))
                        .map(|(&s, (&a, &b))| u64::from(s + a + b))
                        .product::<u64>()
                );
            }
        }
    }
}

/// The constant is converted as `cast<T>` converts: spot values checked by
/// hand on both backends.
#[test]
fn constants_convert_per_data_type() {
    let one = |dt: DataType, value: f64| -> Vec<u8> {
        let x = HostTensor::zeros(TensorDesc::new(dt, [1])).unwrap();
        let d = padding1(&x, PaddingMode::Constant, value, &[1], &[0]);
        let out = same_everywhere(&d, &x);
        out.bytes()[..dt.size_bytes()].to_vec()
    };
    assert_eq!(one(DataType::Int8, -300.5), [0x80]);
    assert_eq!(one(DataType::Uint8, 255.9), [255]);
    assert_eq!(one(DataType::Uint8, -1.0), [0]);
    assert_eq!(one(DataType::Int16, f64::NAN), [0, 0]);
    assert_eq!(one(DataType::Float16, 65520.0), [0x00, 0x7c]);
    assert_eq!(
        one(DataType::Float16, 0.1),
        half::f16::from_f64(0.1).to_le_bytes()
    );
    assert_eq!(one(DataType::Float32, -0.0), (-0.0f32).to_le_bytes());
    assert_eq!(one(DataType::Int32, 2.5e9), i32::MAX.to_le_bytes());
    assert_eq!(
        one(DataType::Uint64, 2f64.powi(63)),
        (1u64 << 63).to_le_bytes()
    );
    assert_eq!(one(DataType::Int64, -9.99), (-9i64).to_le_bytes());
    assert_eq!(one(DataType::Float64, 0.1), 0.1f64.to_le_bytes());
}

/// More than 65,535 workgroups along x: the plan spreads them over a 2-D
/// grid, and an output of 256 MiB is bound in segments on lavapipe. The
/// expected output is written down directly (one row of the input, every
/// other element the constant), not taken from the reference.
#[test]
fn more_than_65535_workgroups() {
    let row: Vec<i32> = (0..1000).map(|i| i * 7 - 3000).collect();
    let x = HostTensor::from_slice([1, 1000], &row).unwrap();
    let (before, after) = (33_000u32, 34_199u32);
    let d = padding1(&x, PaddingMode::Constant, -7.9, &[before, 0], &[after, 0]);
    let plan = d.gpu_plan().unwrap();
    assert!(
        plan.passes[0].workgroups > 65_535,
        "{} workgroups",
        plan.passes[0].workgroups
    );
    let out = gpu().run(&d, &[&x]).unwrap().remove(0);
    assert_eq!(out.sizes(), [before + 1 + after, 1000]);
    let want_row: Vec<u8> = row.iter().flat_map(|v| v.to_le_bytes()).collect();
    let constant = (-7i32).to_le_bytes();
    for (r, chunk) in out.bytes().chunks(4000).enumerate() {
        if r == before as usize {
            assert_eq!(chunk, &want_row[..], "row {r}");
        } else if let Some(i) = chunk.chunks(4).position(|e| e != constant) {
            panic!("row {r}, column {i}: {:02x?}", &chunk[4 * i..4 * i + 4]);
        }
    }
    // EDGE over the same grid: every row is the input's.
    let d = padding1(&x, PaddingMode::Edge, 0.0, &[before, 0], &[after, 0]);
    let out = gpu().run(&d, &[&x]).unwrap().remove(0);
    for (r, chunk) in out.bytes().chunks(4000).enumerate() {
        assert_eq!(chunk, &want_row[..], "row {r}");
    }
}
