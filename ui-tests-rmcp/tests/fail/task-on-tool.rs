// An rmcp tool returns a tool's result: a task boundary on it is refused.
use fence_runtime::fence_boundary;
use rmcp::{tool, tool_router};

struct Server;

#[tool_router]
impl Server {
    #[fence_boundary(task)]
    #[tool]
    fn inbox(&self) -> String {
        String::new()
    }
}

fn main() {
    let _ = Server::tool_router();
}
