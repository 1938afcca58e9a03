//! Who is calling.

use toolhost_runtime::UserSpace;

/// The user a request was authenticated as (or the surface's one default user) and the
/// home their tools run in. Built only from a name that passed the user-name rule
/// ([`crate::user_space`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Caller {
    /// The user and their home.
    pub space: UserSpace,
}

impl Caller {
    /// The caller whose tools run in `space`.
    pub fn new(space: UserSpace) -> Caller {
        Caller { space }
    }

    /// The user's name (an email, in the seed's layout).
    pub fn user(&self) -> &str {
        &self.space.user
    }
}
