// A downstream impl of the boundary's hidden conversions would let a `#[fence_boundary]` handler
// hand the model raw text: the traits are sealed, by a method parameter whose type is in a
// private module, so no other crate can write the method.
use fence_runtime::__private_0_1::{FenceableReturnType, FenceableToolError};
use fence_runtime::{Source, ToolOutput};

struct Raw(String);

impl FenceableReturnType for Raw {
    fn into_tool_output(
        self,
        _: Option<&'static str>,
        _: &'static str,
        _: fence_runtime::__private_0_1::sealed::Seal,
    ) -> ToolOutput {
        ToolOutput::dispatch_failure(self.0)
    }
}

impl FenceableToolError for Raw {
    fn err_output(self, _: &Source) -> ToolOutput {
        ToolOutput::dispatch_failure(self.0)
    }
}

fn main() {}
