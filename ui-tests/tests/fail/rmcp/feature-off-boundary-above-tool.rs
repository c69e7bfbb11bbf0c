// fence-runtime without its `rmcp` feature: `ToolOutput` is not an rmcp tool result. The one
// error names the feature, at the boundary, instead of rmcp's route error.
use fence_runtime::fence_boundary;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{schemars, tool, tool_router};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct FetchRequest {
    url: String,
}

struct Server;

#[tool_router]
impl Server {
    /// Fetches a page.
    #[fence_boundary(tool = "web_fetch")]
    #[tool]
    async fn web_fetch(&self, Parameters(request): Parameters<FetchRequest>) -> String {
        request.url
    }

    #[fence_boundary]
    #[tool(name = "read")]
    fn read_file(
        &self,
        Parameters(request): Parameters<FetchRequest>,
    ) -> Result<String, std::io::Error> {
        std::fs::read_to_string(request.url)
    }
}

fn main() {
    let _ = Server::tool_router();
}
