// A downstream impl of the boundary's hidden conversion would let a `#[fence_boundary]` handler
// hand the model raw text: the trait is sealed.
use fence_runtime::ToolOutput;

struct Raw(String);

impl fence_runtime::__private_0_1::IntoToolOutput for Raw {
    fn into_tool_output(self, _: Option<&'static str>, _: &'static str) -> ToolOutput {
        ToolOutput::dispatch_failure(self.0)
    }
}

fn main() {}
