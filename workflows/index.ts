// Entry point for the worker's workflowsPath / bundle: every workflow type the worker serves.
export { rolloutWorkflow } from './rollout';
export { fleetWorkflow } from './fleet';
