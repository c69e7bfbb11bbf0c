// The fence source is the name the model calls the tool by: a boundary's own `tool` must agree
// with the name rmcp registers.
use fence_runtime::fence_boundary;
use rmcp::{tool, tool_router};

struct Server;

#[tool_router]
impl Server {
    #[fence_boundary(tool = "web-fetch")]
    #[tool]
    fn web_fetch(&self) -> String {
        String::new()
    }

    #[fence_boundary(tool = "read-file")]
    #[tool(name = "read")]
    fn read_file(&self) -> String {
        String::new()
    }
}

fn main() {
    let _ = Server::tool_router();
}
