//! Roles and scopes as the API names them, and tokens and users.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use toolhost_host::{Role, Scope};
use toolhost_store::{NewToken, Token, User};
use utoipa::ToSchema;

use crate::auth::Principal;
use crate::body::Body;
use crate::{ApiState, Problem};

/// A user's role.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RoleName {
    /// Reads everything.
    Viewer,
    /// Also manages agents and MCP servers.
    Operator,
    /// Also manages users and tokens.
    Admin,
}

/// What a token allows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) enum ScopeName {
    /// List tools and read everything else.
    #[serde(rename = "tools:read")]
    ToolsRead,
    /// Call tools.
    #[serde(rename = "tools:call")]
    ToolsCall,
    /// Manage what the user's role allows.
    #[serde(rename = "admin")]
    Admin,
}

fn role(r: RoleName) -> Role {
    match r {
        RoleName::Viewer => Role::Viewer,
        RoleName::Operator => Role::Operator,
        RoleName::Admin => Role::Admin,
    }
}

fn role_name(r: Role) -> RoleName {
    match r {
        Role::Viewer => RoleName::Viewer,
        Role::Operator => RoleName::Operator,
        Role::Admin => RoleName::Admin,
    }
}

fn scope(s: ScopeName) -> Scope {
    match s {
        ScopeName::ToolsRead => Scope::ToolsRead,
        ScopeName::ToolsCall => Scope::ToolsCall,
        ScopeName::Admin => Scope::Admin,
    }
}

fn scope_name(s: Scope) -> ScopeName {
    match s {
        Scope::ToolsRead => ScopeName::ToolsRead,
        Scope::ToolsCall => ScopeName::ToolsCall,
        Scope::Admin => ScopeName::Admin,
    }
}

/// A token, never its secret.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TokenOut {
    /// Its id: the token starts `th_<id>_`.
    pub(crate) id: String,
    /// What it is for.
    pub(crate) name: String,
    /// Whose it is.
    pub(crate) user: String,
    /// What it allows.
    pub(crate) scopes: Vec<ScopeName>,
    /// The agent it is bound to.
    pub(crate) agent: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub(crate) created_at: i64,
    /// When it stops working.
    pub(crate) expires_at: Option<i64>,
    /// When it last authenticated a request (to the minute).
    pub(crate) last_used_at: Option<i64>,
    /// When it was revoked.
    pub(crate) revoked_at: Option<i64>,
}

fn token_out(t: Token) -> TokenOut {
    TokenOut {
        id: t.id,
        name: t.name,
        user: t.user,
        scopes: t.scopes.into_iter().map(scope_name).collect(),
        agent: t.agent,
        created_at: t.created_at,
        expires_at: t.expires_at,
        last_used_at: t.last_used_at,
        revoked_at: t.revoked_at,
    }
}

/// A token to make.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TokenBody {
    /// What it is for (1 to 100 bytes).
    #[schema(min_length = 1, max_length = 100, pattern = "\\S")]
    pub(crate) name: String,
    /// Whose it is (default: the caller's own; another user's needs the admin role).
    #[serde(default)]
    pub(crate) user: Option<String>,
    /// What it allows (default `tools:read` and `tools:call`); never more than the
    /// caller's own token allows.
    #[serde(default)]
    #[schema(min_items = 1)]
    pub(crate) scopes: Option<Vec<ScopeName>>,
    /// An agent to bind it to.
    #[serde(default)]
    pub(crate) agent: Option<String>,
    /// Milliseconds since the Unix epoch.
    #[serde(default)]
    pub(crate) expires_at: Option<i64>,
}

/// A new token: the only time its secret is shown.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct NewTokenOut {
    /// The token's record.
    pub(crate) token: TokenOut,
    /// The token itself: send it as `Authorization: Bearer …`. Not shown again.
    pub(crate) secret: String,
}

/// Tokens: every user's for an admin, one's own otherwise; newest first.
#[utoipa::path(get, path = "/tokens", operation_id = "listTokens", tag = "tokens",
    responses((status = 200, body = Vec<TokenOut>), (status = 401, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn list_tokens(
    State(state): State<ApiState>,
    who: Principal,
) -> Result<Json<Vec<TokenOut>>, Problem> {
    who.reader()?;
    let user = (who.0.role < Role::Admin).then(|| who.actor().to_string());
    let tokens = state.store.tokens(user.as_deref()).await?;
    Ok(Json(tokens.into_iter().map(token_out).collect()))
}

/// Makes a token and shows it once.
#[utoipa::path(post, path = "/tokens", operation_id = "createToken", tag = "tokens", request_body = TokenBody,
    responses((status = 201, body = NewTokenOut), (status = 403, body = Problem), (status = 404, body = Problem), (status = 422, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn create_token(
    State(state): State<ApiState>,
    who: Principal,
    Body(body): Body<TokenBody>,
) -> Result<(StatusCode, Json<NewTokenOut>), Problem> {
    who.require(Role::Viewer, Scope::Admin)?;
    let user = body.user.unwrap_or_else(|| who.actor().to_string());
    if user != who.actor() && who.0.role < Role::Admin {
        return Err(Problem::forbidden(
            "only an admin makes tokens for other users",
        ));
    }
    let scopes: Vec<Scope> = match body.scopes {
        Some(s) => s.into_iter().map(scope).collect(),
        None => vec![Scope::ToolsRead, Scope::ToolsCall],
    };
    if let Some(extra) = scopes.iter().find(|s| !who.0.may(**s)) {
        return Err(Problem::forbidden(format!(
            "a token cannot allow more than the one that makes it: yours lacks `{}`",
            extra.as_str()
        )));
    }
    if let Some(agent) = &body.agent
        && state.host.agents().agent(agent).await?.is_none()
    {
        return Err(Problem::not_found("agent", agent).at("agent"));
    }
    let (token, secret) = state
        .store
        .create_token(
            who.actor(),
            NewToken {
                name: body.name,
                user,
                scopes,
                agent: body.agent,
                expires_at: body.expires_at,
            },
        )
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(NewTokenOut {
            token: token_out(token),
            secret,
        }),
    ))
}

/// Revokes a token: it stops working at once. Another user's token is a 404 unless the
/// caller is an admin.
#[utoipa::path(delete, path = "/tokens/{id}", operation_id = "revokeToken", tag = "tokens",
    params(("id" = String, Path, description = "The token's id")),
    responses((status = 200, body = TokenOut), (status = 404, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn revoke_token(
    State(state): State<ApiState>,
    who: Principal,
    Path(id): Path<String>,
) -> Result<Json<TokenOut>, Problem> {
    who.require(Role::Viewer, Scope::Admin)?;
    let own = state.store.tokens(Some(who.actor())).await?;
    if who.0.role < Role::Admin && !own.iter().any(|t| t.id == id) {
        return Err(Problem::not_found("token", &id));
    }
    let revoked = state.store.revoke_token(who.actor(), &id).await?;
    state.host.access_changed();
    Ok(Json(token_out(revoked)))
}

/// A user.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct UserOut {
    /// The user name.
    pub(crate) name: String,
    /// Its role.
    pub(crate) role: RoleName,
    /// Milliseconds since the Unix epoch.
    pub(crate) created_at: i64,
}

fn user_out(u: User) -> UserOut {
    UserOut {
        name: u.name,
        role: role_name(u.role),
        created_at: u.created_at,
    }
}

/// A user's role.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UserBody {
    /// The role.
    pub(crate) role: RoleName,
}

/// Users, by name (admins only).
#[utoipa::path(get, path = "/users", operation_id = "listUsers", tag = "users",
    responses((status = 200, body = Vec<UserOut>), (status = 403, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn list_users(
    State(state): State<ApiState>,
    who: Principal,
) -> Result<Json<Vec<UserOut>>, Problem> {
    who.admin()?;
    Ok(Json(
        state
            .store
            .users()
            .await?
            .into_iter()
            .map(user_out)
            .collect(),
    ))
}

/// Creates a user, or changes a user's role (admins only).
#[utoipa::path(put, path = "/users/{name}", operation_id = "putUser", tag = "users", request_body = UserBody,
    params(("name" = String, Path, description = "The user name")),
    responses((status = 200, body = UserOut), (status = 403, body = Problem), (status = 409, body = Problem, description = "An admin lowering their own role"), (status = 422, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn put_user(
    State(state): State<ApiState>,
    who: Principal,
    Path(name): Path<String>,
    Body(body): Body<UserBody>,
) -> Result<Json<UserOut>, Problem> {
    who.admin()?;
    if name == who.actor() && body.role != RoleName::Admin {
        return Err(Problem::new(
            StatusCode::CONFLICT,
            "an admin cannot lower their own role: another admin must",
        ));
    }
    let user = state
        .store
        .put_user(who.actor(), &name, role(body.role))
        .await?;
    state.host.access_changed();
    Ok(Json(user_out(user)))
}
