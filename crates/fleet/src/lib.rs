//! Scale-out (in progress): the pieces gateways and runners share. See `rendezvous` for
//! how every gateway picks the same home runner for a user without a shared table, and
//! `wire` for the subjects and messages calls travel on over NATS.
#![warn(missing_docs, unreachable_pub)]

pub mod rendezvous;
