// `Json<T>` below `#[tool]`: the boundary cannot see `#[tool]`, so it says to swap the two, and
// `Json<T>` is not a type it can fence. Above `#[tool]` the message is `json-output.rs`'s.
use fence_runtime::fence_boundary;
use rmcp::handler::server::wrapper::Json;
use rmcp::{schemars, tool, tool_router};

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Weather {
    celsius: f32,
}

struct Server;

#[tool_router]
impl Server {
    #[tool]
    #[fence_boundary]
    fn weather(&self) -> Json<Weather> {
        Json(Weather { celsius: 21.5 })
    }
}

fn main() {
    let _ = Server::tool_router();
}
