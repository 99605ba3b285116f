<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests\Security;

use PHPUnit\Framework\TestCase;
use ServicePay\WooCommerce\Security\SecretBox;

final class SecretBoxTest extends TestCase {

	public function test_round_trips_and_never_stores_the_secret_in_the_clear(): void {
		$box    = new SecretBox( 'site-salt-a' );
		$sealed = $box->seal( 'whsec_abcdefghijklmnopqrstuvwxyz012345' );
		$this->assertStringStartsWith( 'v1:', $sealed );
		$this->assertStringNotContainsString( 'whsec_', $sealed );
		$this->assertStringNotContainsString( 'whsec_', (string) base64_decode( substr( $sealed, 3 ) ) );
		$this->assertSame( 'whsec_abcdefghijklmnopqrstuvwxyz012345', $box->open( $sealed ) );
	}

	public function test_each_seal_differs_so_equal_secrets_are_not_recognisable(): void {
		$box = new SecretBox( 'salt' );
		$this->assertNotSame( $box->seal( 'same' ), $box->seal( 'same' ) );
	}

	public function test_other_salts_or_altered_values_open_to_null(): void {
		$sealed = ( new SecretBox( 'salt-one' ) )->seal( 'whsec_1' );
		$this->assertNull( ( new SecretBox( 'salt-two' ) )->open( $sealed ) );
		$bytes       = base64_decode( substr( $sealed, 3 ) );
		$bytes[30]   = chr( ord( $bytes[30] ) ^ 1 );
		$this->assertNull( ( new SecretBox( 'salt-one' ) )->open( 'v1:' . base64_encode( $bytes ) ) );
		$this->assertNull( ( new SecretBox( 'salt-one' ) )->open( 'whsec_1' ) );
		$this->assertNull( ( new SecretBox( 'salt-one' ) )->open( 'v1:***' ) );
	}

	public function test_refuses_empty_key_material(): void {
		$this->expectException( \InvalidArgumentException::class );
		new SecretBox( '' );
	}
}
