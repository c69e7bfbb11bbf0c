//! [`FencedClient`]: a running rmcp client whose transport is a [`FencedTransport`], so that no
//! method of it can hand out what the proxy would not have passed on.

use std::ops::Deref;

use fence_runtime::ToolOutput;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{ClientInitializeError, QuitReason, RoleClient, RunningService, Service};
use rmcp::transport::IntoTransport;
use rmcp::{Peer, ServiceError};

use super::result::fenced_tool_output;
use super::transport::FencedTransport;

/// A running rmcp client that receives what `fence mcp` would have passed on, and nothing else.
///
/// It is made only by [`serve`](FencedClient::serve), which puts the proxy's table between the
/// transport and rmcp: every message the server sends is read by the proxy's own session before
/// rmcp reads it. So every method of the client is fenced, those it has through [`Deref`] to
/// rmcp's [`Peer`] (`call_tool`, `list_all_tools`, `read_resource`, `get_prompt`, `complete`,
/// `peer_info`, …) and any rmcp adds later, and so is what the client's handler is sent (the
/// server's requests and notifications). There is no unfenced client inside to reach.
///
/// What the table keeps as the server sent it (see the crate's table) the client receives as
/// it was sent: a prompt's messages, the resources and templates listed, completions, log
/// messages, images, resource links, `_meta`.
///
/// ```no_run
/// use fence_mcp::rmcp::FencedClient;
/// use rmcp::model::CallToolRequestParams;
/// use rmcp::transport::TokioChildProcess;
///
/// # async fn turn() -> Result<(), Box<dyn std::error::Error>> {
/// let server = TokioChildProcess::new(tokio::process::Command::new("my-mcp-server"))?;
/// let client = FencedClient::serve((), server).await?;
/// let result = client.call_tool(CallToolRequestParams::new("web-fetch")).await?;
/// // Each text block of `result.content` is one block, `<untrusted-content source=tool:web-fetch>…`.
/// let tools = client.list_all_tools().await?;
/// // Each tool's title and description with every marker neutralised.
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct FencedClient<S: Service<RoleClient>> {
    client: RunningService<RoleClient, S>,
}

impl<S: Service<RoleClient>> FencedClient<S> {
    /// Starts `handler` (`()` for a client that handles nothing) as a client of the server at
    /// the other end of `transport` (any rmcp client transport: a child process, Streamable
    /// HTTP, a pair of streams), through a [`FencedTransport`], and initialises the session.
    ///
    /// # Errors
    ///
    /// rmcp's, when the session cannot be initialised; an `initialize` answer the table
    /// withholds is an error answer to rmcp.
    pub async fn serve<T, E, A>(
        handler: S,
        transport: T,
    ) -> Result<FencedClient<S>, ClientInitializeError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        FencedClient::serve_fenced(handler, FencedTransport::new(transport.into_transport())).await
    }

    /// Starts `handler` as a client over `transport`, a [`FencedTransport`] set up as the
    /// caller chose (such as [`FencedTransport::removing_structured_content`]).
    ///
    /// # Errors
    ///
    /// rmcp's, when the session cannot be initialised.
    pub async fn serve_fenced<T>(
        handler: S,
        transport: FencedTransport<T>,
    ) -> Result<FencedClient<S>, ClientInitializeError>
    where
        T: rmcp::transport::Transport<RoleClient> + 'static,
    {
        let client = rmcp::serve_client(handler, transport).await?;
        Ok(FencedClient { client })
    }

    /// Calls a tool, as rmcp's `call_tool` does, and gives its result as the one block a model
    /// reads, under `tool:<params.name>`: what [`tool_output`](super::tool_output) makes of the
    /// result as the server sent it (each text once, every marker neutralised, failed when the
    /// result's `isError` says so).
    ///
    /// # Errors
    ///
    /// rmcp's, when the call fails: a JSON-RPC error from the server (its strings
    /// neutralised), a result the table withholds, a closed transport.
    pub async fn call_tool_output(
        &self,
        params: CallToolRequestParams,
    ) -> Result<ToolOutput, ServiceError> {
        let tool = params.name.clone();
        let result = self.client.call_tool(params).await?;
        Ok(fenced_tool_output(&tool, &result))
    }

    /// The client's peer, through which every request is answered by way of the table: what
    /// [`Deref`] gives.
    pub fn peer(&self) -> &Peer<RoleClient> {
        self.client.peer()
    }

    /// Ends the session, as rmcp's `cancel` does.
    ///
    /// # Errors
    ///
    /// rmcp's, when the session's task failed.
    pub async fn cancel(self) -> Result<QuitReason, tokio::task::JoinError> {
        self.client.cancel().await
    }
}

impl<S: Service<RoleClient>> Deref for FencedClient<S> {
    type Target = Peer<RoleClient>;

    fn deref(&self) -> &Peer<RoleClient> {
        self.client.peer()
    }
}
