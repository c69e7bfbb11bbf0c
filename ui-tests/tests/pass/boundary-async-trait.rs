use async_trait::async_trait;
use fence_runtime::{fence_boundary, ToolOutput};

#[async_trait]
trait Tool {
    async fn call(&self, input: String) -> ToolOutput;
}

struct Echo;

#[async_trait]
impl Tool for Echo {
    #[fence_boundary(tool = "echo")]
    async fn call(&self, input: String) -> String {
        input
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let tool: Box<dyn Tool> = Box::new(Echo);
    assert_eq!(tool.call("x".into()).await.content().fence_source(), Some("tool:echo"));
}
