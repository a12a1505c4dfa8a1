// The CDK entry (cdk.json): one ServiceStack for the stage named by `-c stage=<name>` (default dev).
import { buildServiceApp } from './service-app.ts';

buildServiceApp().app.synth();
