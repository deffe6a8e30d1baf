ops_macros::operator!("../../specs/onnx/reduce_sum.op");

use ops_core::{DataType, HostTensor, Operator, TensorDesc};

#[test]
fn smoke() {
    let x = HostTensor::from_slice(
        [3u32, 2, 2].as_slice(),
        &[1f32, 2., 3., 4., 5., 6., 7., 8., 9., 10., 11., 12.],
    )
    .unwrap();
    let axes = HostTensor::from_slice([1u32].as_slice(), &[1i64]).unwrap();
    let d = ReduceSumDesc::builder()
        .data(x.desc().clone())
        .axes(axes.clone())
        .keepdims(false)
        .reduced(TensorDesc::new(DataType::Float32, [3, 2]))
        .build()
        .unwrap();
    let cpu = d.run_cpu(&[&x, &axes]).unwrap();
    println!("{:?}", cpu[0].to_vec::<f32>());
    let gpu = ops_gpu::shared().unwrap().run(&d, &[&x, &axes]).unwrap();
    println!("{:?}", gpu[0].to_vec::<f32>());
    for (name, plan) in d.gpu_plan_variants().unwrap() {
        let g = ops_gpu::shared()
            .unwrap()
            .run_plan(&d, &[&x, &axes], &plan)
            .unwrap();
        println!("{name}: {:?}", g[0].to_vec::<f32>());
    }
}
