mod s {
    ops_macros::operator!("../../specs/onnx/reduce_sum.op");
}
mod m {
    ops_macros::operator!("../../specs/onnx/reduce_mean.op");
}
mod p {
    ops_macros::operator!("../../specs/onnx/reduce_prod.op");
}
mod l1 {
    ops_macros::operator!("../../specs/onnx/reduce_l1.op");
}
mod l2 {
    ops_macros::operator!("../../specs/onnx/reduce_l2.op");
}
mod ss {
    ops_macros::operator!("../../specs/onnx/reduce_sum_square.op");
}
mod ls {
    ops_macros::operator!("../../specs/onnx/reduce_log_sum.op");
}
mod lse {
    ops_macros::operator!("../../specs/onnx/reduce_log_sum_exp.op");
}
mod mx {
    ops_macros::operator!("../../specs/onnx/reduce_max.op");
}
mod mn {
    ops_macros::operator!("../../specs/onnx/reduce_min.op");
}

use ops_core::{fuzz, GpuPlan, HostTensor, OpError, Operator, OperatorType};
use proptest::test_runner::{TestCaseError, TestRunner};

fn gpu_run(op: &dyn Operator, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
    ops_gpu::shared().unwrap().run(op, inputs)
}
fn gpu_plan(
    op: &dyn Operator,
    inputs: &[&HostTensor],
    plan: &GpuPlan,
) -> Result<Vec<HostTensor>, OpError> {
    ops_gpu::shared().unwrap().run_plan(op, inputs, plan)
}

#[test]
fn fuzz_all() {
    let infos = [
        <s::ReduceSumDesc as OperatorType>::INFO,
        <m::ReduceMeanDesc as OperatorType>::INFO,
        <p::ReduceProdDesc as OperatorType>::INFO,
        <l1::ReduceL1Desc as OperatorType>::INFO,
        <l2::ReduceL2Desc as OperatorType>::INFO,
        <ss::ReduceSumSquareDesc as OperatorType>::INFO,
        <ls::ReduceLogSumDesc as OperatorType>::INFO,
        <lse::ReduceLogSumExpDesc as OperatorType>::INFO,
        <mx::ReduceMaxDesc as OperatorType>::INFO,
        <mn::ReduceMinDesc as OperatorType>::INFO,
    ];
    let cases: u32 = std::env::var("CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    for info in infos {
        let a = fuzz::acceptance(info, 2000);
        println!("{} acceptance {:.1}%", info.name, 100.0 * a.rate());
        let mut runner = TestRunner::new(fuzz::config(cases, None));
        let r = runner.run(&fuzz::valid_cases(info), |case| {
            let out = fuzz::check_valid(&case, Some(&gpu_run)).map_err(TestCaseError::fail)?;
            fuzz::check_variants(&case, &out, &gpu_plan).map_err(TestCaseError::fail)?;
            Ok(())
        });
        if let Err(e) = r {
            panic!("{}: {e}", info.name);
        }
        let mut runner = TestRunner::new(fuzz::config(256, None));
        let r = runner.run(&fuzz::invalid_cases(info), |case| {
            fuzz::check_invalid(&case).map_err(TestCaseError::fail)
        });
        if let Err(e) = r {
            panic!("{} invalid: {e}", info.name);
        }
        if let Err(e) = fuzz::check_spec(info, 64) {
            panic!("{e}");
        }
        println!("{} ok", info.name);
    }
}
