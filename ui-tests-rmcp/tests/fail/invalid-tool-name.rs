// The registered name becomes the fence source, which has no whitespace, `<` or `>`.
use fence_runtime::fence_boundary;
use rmcp::{tool, tool_router};

struct Server;

#[tool_router]
impl Server {
    #[fence_boundary]
    #[tool(name = "web fetch")]
    fn web_fetch(&self) -> String {
        String::new()
    }
}

fn main() {
    let _ = Server::tool_router();
}
