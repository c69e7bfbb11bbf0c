use fence_runtime::ToolOutput;

fn main() {
    let _output: ToolOutput = "raw tool output".into();
}
