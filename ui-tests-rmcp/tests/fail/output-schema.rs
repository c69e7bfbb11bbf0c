// A boundary never sends `structuredContent`, so a declared output schema would break clients
// that follow the spec: refused at the key.
use fence_runtime::fence_boundary;
use rmcp::{tool, tool_router};

struct Server;

#[tool_router]
impl Server {
    #[fence_boundary]
    #[tool(description = "The weather.", output_schema = std::sync::Arc::new(Default::default()))]
    fn weather(&self) -> String {
        "21.5".to_owned()
    }
}

fn main() {
    let _ = Server::tool_router();
}
